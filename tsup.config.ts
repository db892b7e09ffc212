import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    anthropic: 'src/adapters/anthropic/index.ts',
    openai: 'src/adapters/openai/index.ts',
    'ai-sdk': 'src/adapters/ai-sdk/index.ts',
    mcp: 'src/mcp/index.ts',
    sqlite: 'src/durable/sqlite/index.ts',
    // The QuickJS runtime's worker thread, loaded by path from beside the bundle.
    'quickjs-worker': 'src/ptc/quickjs/worker.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  treeshake: true,
  // The subpath entries share the core through chunks, so `IncompleteArguments` and friends are one
  // class whichever entry a program imports first (also for CJS, where tsup calls this experimental).
  splitting: true,
  // `import.meta.url` in the CommonJS build (the runtime finds its worker script and QuickJS's wasm by it).
  shims: true,
});
