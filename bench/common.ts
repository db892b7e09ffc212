/** Helpers shared by the benches: the header every run prints, and small statistics. */
import { cpus } from 'node:os';
import { relative } from 'node:path';

/**
 * Quick mode (`npm run bench`, the `--quick` flag): fewer calls and rounds and only the headline rows,
 * so the whole run takes about a minute; `npm run bench:full` runs every bench at full size.
 */
export const QUICK = process.argv.includes('--quick');

/** Prints what produced the figures: the command, Node version and CPU (and, in quick mode, that it is). */
export function printHeader(title: string): void {
  const script = relative(process.cwd(), process.argv[1] ?? '');
  const command = [process.argv0, ...process.execArgv, script].join(' ');
  const viaNpm = process.env['npm_lifecycle_event'] ? ` (via npm run ${process.env['npm_lifecycle_event']})` : '';
  const cpu = cpus();
  console.log(`\n# ${title}`);
  console.log(`command: ${command}${viaNpm}`);
  console.log(`node ${process.version}, ${process.platform}/${process.arch}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}`);
  if (QUICK) console.log('QUICK MODE (npm run bench): the headline benches, smaller. Every bench at full size: npm run bench:full');
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Collects garbage if node runs with --expose-gc, so one round's garbage is not billed to the next. */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * Collects only the young generation (a scavenge) if node runs with --expose-gc. For benches whose timed
 * runs are short: a forced full `gc()` also throws away V8's optimized code (measured on Node 20: about
 * 115 functions re-optimized after each one, and 1000 no-op calls through `pipeline.run` take 35–65 ms
 * instead of 3.4 ms for the next ten runs or so), so a run of a few thousand calls after it is timed cold.
 */
export function collectYoungGarbage(): void {
  (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc?.({ type: 'minor' });
}

export const fmt = (value: number, digits = 1): string => value.toFixed(digits);

/** A baseline's reading of a call's arguments: JSON text parsed, anything else as it is. */
export const argsOf = (args: unknown): unknown => (typeof args === 'string' ? JSON.parse(args) : args);

/** mulberry32: a tiny seeded PRNG with uniform floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
