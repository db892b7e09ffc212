// Types of prefixes.mjs (plain JavaScript, so that scripts/runtimes.mjs runs it without a compiler).
export interface Pinned {
  /** The npm package, e.g. `node`, `miniflare`. */
  readonly package: string;
  readonly version: string;
  /** Its executable in node_modules/.bin; absent for a library run by another runtime. */
  readonly bin?: string;
  /** For a library (miniflare): the runtime that runs it, a key of versions.json. */
  readonly runsOn?: string;
}
export const VERSIONS: Readonly<Record<string, Pinned>>;
export function runtimesDir(): string;
export function prefixOf(name: string): string;
export function binaryOf(name: string): string | undefined;
