/**
 * The build's side of `src/util/optionalPeer.ts`: an esbuild plugin (for tsup) that sends every import
 * of an optional peer dependency (`bullmq`, `ioredis`, `better-sqlite3`, `pg`, `ai`,
 * `@modelcontextprotocol/sdk/…`, `fast-check`, `@opentelemetry/api`) through a small generated module that loads it and, when
 * it is not installed, throws a `MissingPeerError` naming the package, its range (from package.json's
 * `peerDependencies`) and the install command of the whole subpath. The sources keep their ordinary
 * static imports, so their types are the peers' own; only the build's output changes.
 *
 * Why not the static import as it is: ESM links every module before it runs any, so a missing package
 * fails with Node's `ERR_MODULE_NOT_FOUND` before a line of ours could explain it. The generated module
 * for the ESM build imports the peer with a top-level `await import()` (still the package's ESM build,
 * the one the app imports too) and re-exports its names; for the CommonJS build it is
 * `module.exports = require(peer)`, with the same interop as a direct require.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';

/** The optional peers each subpath needs (every one of them: the install command names them all), as package.json declares them. */
export const SUBPATH_PEERS: Readonly<Record<string, readonly string[]>> = {
  'toolstream/bullmq': ['bullmq', 'ioredis'],
  'toolstream/sqlite': ['better-sqlite3'],
  'toolstream/postgres': ['pg'],
  'toolstream/ai-sdk': ['ai'],
  'toolstream/mcp': ['@modelcontextprotocol/sdk'],
  'toolstream/testing': ['fast-check'],
  'toolstream/otel': ['@opentelemetry/api'],
};

/**
 * The peers as tsup's `noExternal`: tsup marks every peer external before a plugin sees it, so these
 * are left to the plugin, which keeps them external all the same (only behind the generated module).
 */
export const OPTIONAL_PEERS: readonly string[] = [...new Set(Object.values(SUBPATH_PEERS).flat())];

const NAMESPACE = 'optional-peer';
const LOADER = 'src/util/optionalPeer.ts';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * The esbuild plugin.
 *
 * @example
 * ```ts
 * export default defineConfig({ entry: { bullmq: 'src/bullmq/index.ts' }, esbuildPlugins: [optionalPeers()] });
 * ```
 */
export function optionalPeers(): Plugin {
  return {
    name: 'optional-peers',
    setup(pluginBuild) {
      // tsup bundles its config to a temporary file, so paths are taken from the project, not from here.
      const root = pluginBuild.initialOptions.absWorkingDir ?? process.cwd();
      const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
        peerDependencies: Record<string, string>;
        peerDependenciesMeta: Record<string, { optional?: boolean }>;
      };
      // The SDKs of `toolstream/testing`'s scripted streams are not here: it imports them on first use
      // and says itself when one is missing (`MissingSdkError`).
      for (const name of OPTIONAL_PEERS) {
        if (manifest.peerDependenciesMeta[name]?.optional !== true) throw new Error(`optionalPeers: ${name} is not an optional peer in package.json`);
      }
      const escaped = OPTIONAL_PEERS.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
      const filter = new RegExp(`^(${escaped.join('|')})(/.*)?$`);
      // tsup builds the split CommonJS output as ESM and converts it with rollup: its own define tells the formats apart.
      const esm = (pluginBuild.initialOptions.define?.['TSUP_FORMAT'] ?? JSON.stringify(pluginBuild.initialOptions.format)) === '"esm"';

      pluginBuild.onResolve({ filter }, ({ path: specifier, namespace }) =>
        // The generated module's own import of the peer stays an import of the package.
        namespace === NAMESPACE ? { path: specifier, external: true } : { path: specifier, namespace: NAMESPACE },
      );
      pluginBuild.onLoad({ filter: /.*/, namespace: NAMESPACE }, async ({ path: specifier }) => {
        const info = peerInfo(specifier, manifest.peerDependencies);
        const loader = JSON.stringify(`./${LOADER}`);
        const peer = JSON.stringify(specifier);
        if (!esm) {
          return { resolveDir: root, loader: 'js', contents: `const { requirePeer } = require(${loader});\nmodule.exports = requirePeer(${JSON.stringify(info)}, () => require(${peer}));\n` };
        }
        // The names the package's ESM build exports (as Node sees them), read from the installed copy.
        const names = Object.keys((await import(specifier)) as object);
        const named = names.filter((name) => name !== 'default' && IDENTIFIER.test(name));
        return {
          resolveDir: root,
          loader: 'js',
          contents: [
            `import { importPeer } from ${loader};`,
            `const peer = await importPeer(${JSON.stringify(info)}, () => import(${peer}));`,
            ...(names.includes('default') ? ['export default peer.default;'] : []),
            `export const { ${named.join(', ')} } = peer;`,
            '',
          ].join('\n'),
        };
      });
    },
  };
}

/** The package a specifier names (`@modelcontextprotocol/sdk/types.js` → `@modelcontextprotocol/sdk`), its subpath and range. */
function peerInfo(specifier: string, ranges: Record<string, string>) {
  const parts = specifier.split('/');
  const packageName = parts.slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
  const subpath = Object.keys(SUBPATH_PEERS).find((key) => SUBPATH_PEERS[key]!.includes(packageName));
  if (subpath === undefined) throw new Error(`optionalPeers: ${packageName} is an optional peer no subpath lists (scripts/optionalPeers.ts, SUBPATH_PEERS)`);
  const install = `npm install ${SUBPATH_PEERS[subpath]!.map((name) => `${name}@${ranges[name]}`).join(' ')}`;
  return { subpath, packageName, range: ranges[packageName]!, install };
}
