import { defineConfig } from 'tsup';
import { quickjsPayload } from '../scripts/quickjsPayload.js';

/**
 * Builds the benches to `.bench/` (gitignored) with plain esbuild output, bundling the library straight
 * from ../src so no separate `npm run build` is needed. zod and rxjs stay external (resolved from
 * node_modules, as a consumer would). `keepNames` stays off on purpose: esbuild's keepNames wraps every
 * named closure in a `__name(...)` call, which adds work to the per-call closures of both the pipeline
 * and the baseline and distorts the figures (this is also why the benches do not run under tsx).
 */
export default defineConfig({
  entry: {
    overhead: 'bench/overhead.ts',
    schedule: 'bench/schedule.ts',
    load: 'bench/load.ts',
    ptc: 'bench/ptc.ts',
    adapters: 'bench/adapters.ts',
    mcp: 'bench/mcp.ts',
    journal: 'bench/journal.ts',
    fleet: 'bench/fleet.ts',
    fleetCluster: 'bench/fleetCluster.ts',
    recentIds: 'bench/recentIds.ts',
  },
  format: ['esm'],
  outDir: '.bench',
  platform: 'node',
  target: 'node20',
  dts: false,
  sourcemap: false,
  minify: false,
  keepNames: false,
  splitting: false, // each bench is one self-contained file
  // The QuickJS runtime's worker and wasm, as the published build embeds them (.bench/quickjs-payload.cjs).
  esbuildPlugins: [quickjsPayload()],
  treeshake: false, // esbuild's own tree shaking; no rollup pass over the output
  clean: true,
});
