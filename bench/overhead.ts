/**
 * Overhead bench: what the full pipeline costs per call compared with the smallest hand-written
 * executor that does the same job.
 *
 * Workload: 100k no-op calls `{ id: 'c' + i, name: 'noop', args: { x: i } }` (and a variant with the
 * args as JSON strings), one parallel tool, concurrency 10. The tool body does nothing, so the figures
 * are the per-call cost of the machinery itself.
 *
 * Baseline (why it is fair): p-limit(10), the same zod schema run with `safeParse` on the same args
 * (after `JSON.parse` in the JSON variant), the tool looked up by name in a Map, the same body, a result
 * object `{ id, index, status, value, content }` placed at the call's index (content rendered with
 * JSON.stringify, as a model needs text), and `Promise.all`. Every call is validated before it is
 * queued, as the pipeline's intake stage does. What the baseline leaves out, and the pipeline pays for:
 * frozen results with per-call timing, duplicate-id detection, timeouts/cancellation plumbing, and RxJS.
 *
 * Method: warm-up rounds, then ROUNDS measured rounds; each round runs every variant once, in an order
 * rotated per round, so drift (JIT, heap growth, CPU clock) spreads over all variants alike. `gc()` runs
 * before every timed run when node has --expose-gc. Reported: median time and calls/s per variant and
 * pipeline_time / baseline_time on medians (target ≤ 1.5; printed, never asserted). The pipeline's
 * results are checked (100k ok results, in order, right values); a failed check exits non-zero.
 */
import pLimit from 'p-limit';
import { from, ignoreElements, lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall, type ToolResult } from '../src/index.js';
import { collectGarbage, fmt, median, printHeader } from './common.js';

const N = 100_000;
const CONCURRENCY = 10;
const WARMUP = 2;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5); // override: BENCH_ROUNDS=9 npm run bench

const input = z.object({ x: z.number() });
type Args = z.infer<typeof input>;
const asyncBody = async ({ x }: Args): Promise<number> => x; // an async no-op
const syncBody = ({ x }: Args): number => x; // a sync no-op

const asyncTool = defineTool({ name: 'noop', description: 'no-op', input, mode: 'parallel', execute: asyncBody });
const syncTool = defineTool({ name: 'noop', description: 'no-op', input, mode: 'parallel', execute: syncBody });
const asyncPipeline = createPipeline({ tools: [asyncTool], concurrency: CONCURRENCY });
// A limit's cost: at the pool's concurrency (every call takes and returns a permit, none waits) and at
// half of it (half the calls at any moment are parked on the limit), as a ratio to the plain path.
const limitedPipeline = (max: number) =>
  createPipeline({ tools: [defineTool({ name: 'noop', description: 'no-op', input, mode: 'parallel', limit: { max }, execute: asyncBody })], concurrency: CONCURRENCY });
const limitAtConcurrency = limitedPipeline(CONCURRENCY);
const limitAtHalf = limitedPipeline(CONCURRENCY / 2);
// A rate limit that never waits (a quota far above the run's starts): each call takes a token and spends
// it when its body starts, as a ratio to the plain path.
const rateLimitedPipeline = createPipeline({
  tools: [defineTool({ name: 'noop', description: 'no-op', input, mode: 'parallel', rateLimit: { max: 10_000_000, perMs: 1000 }, execute: asyncBody })],
  concurrency: CONCURRENCY,
});
const syncPipeline = createPipeline({ tools: [syncTool], concurrency: CONCURRENCY });

const objectCalls: ToolCall[] = Array.from({ length: N }, (_, i) => ({ id: 'c' + i, name: 'noop', args: { x: i } }));
const jsonCalls: ToolCall[] = Array.from({ length: N }, (_, i) => ({ id: 'c' + i, name: 'noop', args: `{"x":${i}}` }));

interface BaselineResult {
  id: string;
  index: number;
  status: 'ok' | 'error';
  value?: unknown;
  content: string;
}

/** The hand-written executor: p-limit + zod + results by index + Promise.all. */
async function baseline(calls: readonly ToolCall[], body: (args: Args) => unknown): Promise<BaselineResult[]> {
  const tools = new Map([['noop', { input, body }]]);
  const limit = pLimit(CONCURRENCY);
  const results = new Array<BaselineResult>(calls.length);
  const tasks: Promise<void>[] = [];
  for (let index = 0; index < calls.length; index++) {
    const { id, name, args } = calls[index]!;
    const tool = tools.get(name);
    const parsed = tool?.input.safeParse(typeof args === 'string' ? JSON.parse(args) : args);
    if (tool === undefined || !parsed?.success) {
      results[index] = { id, index, status: 'error', content: 'invalid call' };
      continue;
    }
    tasks.push(
      limit(async () => {
        const value = await tool.body(parsed.data);
        results[index] = { id, index, status: 'ok', value, content: JSON.stringify(value) };
      }),
    );
  }
  await Promise.all(tasks);
  return results;
}

/** Same id, index, status and value as the call asked for, for every call, in order. */
function check(label: string, results: readonly { id: string; index: number; status: string; value?: unknown }[]): boolean {
  let bad = results.length === N ? -1 : results.length;
  for (let i = 0; bad < 0 && i < N; i++) {
    const r = results[i]!;
    if (r.id !== 'c' + i || r.index !== i || r.status !== 'ok' || r.value !== i) bad = i;
  }
  if (bad >= 0) console.error(`CHECK FAILED: ${label}: ${results.length} results, first wrong at ${bad}:`, results[bad]);
  return bad < 0;
}

interface Variant {
  name: string;
  /** The variant whose median time this one is divided by. */
  baseline?: string;
  run(): Promise<readonly { id: string; index: number; status: string; value?: unknown }[]>;
}

const variants: Variant[] = [
  { name: 'baseline p-limit, async body', run: () => baseline(objectCalls, asyncBody) },
  { name: 'baseline p-limit, sync body', run: () => baseline(objectCalls, syncBody) },
  { name: 'baseline p-limit, async, JSON args', run: () => baseline(jsonCalls, asyncBody) },
  { name: 'pipeline.run, async body', baseline: 'baseline p-limit, async body', run: () => asyncPipeline.run(objectCalls) },
  {
    name: 'operator()+toArray, async body',
    baseline: 'baseline p-limit, async body',
    run: () => lastValueFrom(from(objectCalls).pipe(asyncPipeline.operator(), toArray())),
  },
  {
    // The events layer: every call's received/decided/started/finished/result events, results kept.
    name: 'pipeline.events, async body',
    baseline: 'pipeline.run, async body',
    run: async () => {
      const results: ToolResult[] = [];
      await lastValueFrom(asyncPipeline.events(objectCalls).pipe(tap((e) => e.type === 'result' && results.push(e.result)), ignoreElements()), { defaultValue: undefined });
      return results;
    },
  },
  { name: 'pipeline.run, async, limit max 10', baseline: 'pipeline.run, async body', run: () => limitAtConcurrency.run(objectCalls) },
  { name: 'pipeline.run, async, limit max 5', baseline: 'pipeline.run, async body', run: () => limitAtHalf.run(objectCalls) },
  { name: 'pipeline.run, async, rateLimit never waits', baseline: 'pipeline.run, async body', run: () => rateLimitedPipeline.run(objectCalls) },
  { name: 'pipeline.run, sync body', baseline: 'baseline p-limit, sync body', run: () => syncPipeline.run(objectCalls) },
  { name: 'pipeline.run, async, JSON args', baseline: 'baseline p-limit, async, JSON args', run: () => asyncPipeline.run(jsonCalls) },
];

async function main(): Promise<void> {
  printHeader(`overhead: ${N / 1000}k no-op parallel calls, concurrency ${CONCURRENCY}, ${WARMUP} warm-up + ${ROUNDS} measured rounds`);
  if (!(globalThis as { gc?: unknown }).gc) console.log('(no --expose-gc: rounds run without forced GC)');

  let ok = true;
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(k + round) % variants.length]!; // rotate the order each round
      collectGarbage();
      const start = performance.now();
      const results = await variant.run();
      const elapsed = performance.now() - start;
      if (round >= WARMUP) times.get(variant.name)!.push(elapsed);
      ok = check(variant.name, results) && ok; // every run, outside the timed region
    }
  }

  const medians = new Map([...times].map(([name, t]) => [name, median(t)]));
  console.table(
    variants.map((v) => {
      const t = times.get(v.name)!;
      const ms = medians.get(v.name)!;
      return {
        variant: v.name,
        'median ms': fmt(ms),
        'min–max ms': `${fmt(Math.min(...t))}–${fmt(Math.max(...t))}`,
        'median calls/s': Math.round((N / ms) * 1000).toLocaleString('en-US'),
        'µs/call': fmt((ms * 1000) / N, 2),
        'time ratio vs baseline': v.baseline ? fmt(ms / medians.get(v.baseline)!, 2) : '—',
      };
    }),
  );
  console.log('target: pipeline_time / baseline_time ≤ 1.5 (informational, not asserted); pipeline.events is divided by pipeline.run: the events layer\'s own cost');
  console.log(`sanity: every variant returned ${N} ok results in input order with the right values: ${ok ? 'yes' : 'NO'}`);
  if (!ok) process.exitCode = 1;
}

await main();
