/**
 * Issue 23, finding 5: a tool whose `rateLimit` (or `limit`) is keyed on model arguments must not keep
 * a bucket per key forever. Runs `CALLS` calls, each with a key of its own, through a tool with a keyed
 * rate limit and one with a keyed limit, lets the window pass, and prints one JSON line: how much the
 * heap grew (after GC) once idle, for each, and whether a timer still holds the process.
 * Run in a child process with `--expose-gc` (see ../distinctKeys.test.ts).
 */
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from '../../../src/index.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const heapAfterGc = (): number => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};

const CALLS = Number(process.argv[2] ?? 50_000);
const PER_MS = 50;
const input = z.object({ user: z.string() });
const rateLimited = defineTool({ name: 'rated', description: 'r', input, mode: 'parallel', rateLimit: { max: 2, perMs: PER_MS, key: ({ user }) => user }, execute: () => 'ok' });
const limited = defineTool({ name: 'limited', description: 'l', input, mode: 'parallel', limit: { max: 1, key: ({ user }) => user }, execute: () => 'ok' });
const pipeline = createPipeline({ tools: [rateLimited, limited], concurrency: 64 });

/** Calls of `name`, each with a key no other call has, in batches (the results are counted, not kept). */
async function distinctKeys(name: string, prefix: string, count = CALLS): Promise<number> {
  let ok = 0;
  for (let from = 0; from < count; from += 5_000) {
    const calls: ToolCall[] = Array.from({ length: Math.min(5_000, count - from) }, (_, i) => ({ id: `${prefix}${from + i}`, name, args: { user: `${prefix}-user-${from + i}` } }));
    for (const result of await pipeline.run(calls)) if (result.status === 'ok') ok++;
  }
  return ok;
}

const idle = () => new Promise((resolve) => setTimeout(resolve, PER_MS * 4));

// Warm up: the code paths compiled, a few buckets made and gone.
await distinctKeys('rated', 'warm', 2_000);
await distinctKeys('limited', 'warm-l', 2_000);
await idle();
const report: Record<string, unknown> = { calls: CALLS };
for (const [name, prefix] of [['rated', 'r'], ['limited', 'l']] as const) {
  const before = heapAfterGc();
  const ok = await distinctKeys(name, prefix);
  await idle();
  report[name] = { ok, retainedBytes: heapAfterGc() - before };
}
// What keeps the event loop alive now: an idle pipeline must hold no timer.
report['activeTimers'] = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
console.log(JSON.stringify(report));
