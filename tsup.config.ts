import { defineConfig } from 'tsup';
import { OPTIONAL_PEERS, optionalPeers } from './scripts/optionalPeers.js';
import { quickjsPayload } from './scripts/quickjsPayload.js';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    // `toolstream` as Node resolves it (the `node` export condition): the core and pathSandbox, as in 0.1.
    'index.node': 'src/node/core.ts',
    node: 'src/node/index.ts',
    anthropic: 'src/adapters/anthropic/index.ts',
    openai: 'src/adapters/openai/index.ts',
    'ai-sdk': 'src/adapters/ai-sdk/index.ts',
    mcp: 'src/mcp/index.ts',
    quickjs: 'src/ptc/quickjs/index.ts',
    sqlite: 'src/durable/sqlite/index.ts',
    postgres: 'src/durable/postgres/index.ts',
    bullmq: 'src/bullmq/index.ts',
    testing: 'src/testing/index.ts',
    otel: 'src/otel/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  // None in the package: they would point at sources it does not ship. The output is unminified ESM and CJS.
  sourcemap: false,
  clean: true,
  target: 'node20',
  treeshake: true,
  // The subpath entries share the core through chunks, so `IncompleteArguments` and friends are one
  // class whichever entry a program imports first (also for CJS, where tsup calls this experimental).
  splitting: true,
  // The QuickJS runtime's worker and wasm, embedded in dist/quickjs-payload.cjs (see the plugin); the
  // optional peers loaded so that a missing one is named with its range and install command.
  esbuildPlugins: [quickjsPayload(), optionalPeers()],
  noExternal: [...OPTIONAL_PEERS], // the plugin keeps them external (tsup would before the plugin sees them)
});
