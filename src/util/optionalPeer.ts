/**
 * The optional peers of the subpaths (`bullmq` and `ioredis` for `toolstream/bullmq`, `better-sqlite3` for
 * `toolstream/sqlite`, …), loaded so that a missing one fails naming what to install. The build
 * (`scripts/optionalPeers.ts`) routes every import of an optional peer through {@link importPeer} (ESM)
 * or {@link requirePeer} (CommonJS): a static import of a missing package would fail while Node links
 * the modules, before any code of ours runs, with only the package's name.
 */
import { brand } from './brand.js';

/** What the build knows of an optional peer: written into the generated loader from package.json. */
export interface PeerInfo {
  /** The subpath that needs it, e.g. `toolstream/bullmq`. */
  readonly subpath: string;
  /** The package, e.g. `bullmq`. */
  readonly packageName: string;
  /** Its range in toolstream's `peerDependencies`, e.g. `^6.7.0`. */
  readonly range: string;
  /** The command that installs every peer of the subpath, e.g. `npm install bullmq@^6.7.0 ioredis@^5.0.0`. */
  readonly install: string;
}

/**
 * A subpath of toolstream was loaded without an optional peer dependency it needs: thrown when the
 * subpath is imported (or required). The message names the package, the range and the install
 * command; the fields hold them, and `cause` is Node's own error.
 *
 * @example
 * ```ts
 * try {
 *   await import('toolstream/bullmq');
 * } catch (error) {
 *   if (error instanceof MissingPeerError) console.error(error.install); // npm install bullmq@^6.7.0 ioredis@^5.0.0
 * }
 * ```
 */
export class MissingPeerError extends Error {
  static {
    brand(this, 'MissingPeerError');
  }

  readonly code = 'peer_missing' as const;
  /** The subpath that needs the package, e.g. `toolstream/bullmq`. */
  readonly subpath: string;
  /** The missing package, e.g. `bullmq`. */
  readonly packageName: string;
  /** Its range in toolstream's `peerDependencies`, e.g. `^6.7.0`. */
  readonly range: string;
  /** The command that installs every peer of the subpath. */
  readonly install: string;

  /** @internal Made by the generated loader of each subpath. */
  constructor(info: PeerInfo, cause: unknown) {
    super(
      `${info.subpath} needs ${info.packageName} (${info.range}), an optional peer dependency of toolstream that is not installed. Install it with: ${info.install}`,
      { cause },
    );
    this.name = 'MissingPeerError';
    this.subpath = info.subpath;
    this.packageName = info.packageName;
    this.range = info.range;
    this.install = info.install;
  }
}

/**
 * Imports an optional peer (`load` is `() => import('bullmq')`); a peer that is not installed rejects
 * with a {@link MissingPeerError}. Any other failure (the peer is there but broken, or one of its own
 * dependencies is missing) rejects as it is.
 */
export async function importPeer<T>(info: PeerInfo, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw isNotFound(error, info.packageName) ? new MissingPeerError(info, error) : error;
  }
}

/** {@link importPeer} for the CommonJS build (`load` is `() => require('bullmq')`). */
export function requirePeer<T>(info: PeerInfo, load: () => T): T {
  try {
    return load();
  } catch (error) {
    throw isNotFound(error, info.packageName) ? new MissingPeerError(info, error) : error;
  }
}

/**
 * Node's "not found" for the package itself: `Cannot find package 'bullmq' imported from …` (ESM) or
 * `Cannot find module 'bullmq'` (CommonJS; for a subpath import, `'@modelcontextprotocol/sdk/types.js'`).
 */
function isNotFound(error: unknown, packageName: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && (message.includes(`'${packageName}'`) || message.includes(`'${packageName}/`));
}
