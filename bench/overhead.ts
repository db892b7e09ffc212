/**
 * Overhead bench: what the full pipeline costs per call compared with executors that do the same job
 * with less machinery.
 *
 * Workload: 100k no-op calls `{ id: 'c' + i, name: 'noop', args: { i } }` (and a variant with the args
 * as JSON strings), one parallel tool with the schema `z.object({ i: z.number() })`, concurrency 10. The
 * tool body does nothing (async, or sync in the sync variant), so the figures are the per-call cost of
 * the machinery itself.
 *
 * Five baselines, each run on the same three workloads (async body, sync body, JSON-string args):
 * - **hand pool** (the limit, issue 15): ten async workers pulling the next index, each doing
 *   `out[k] = { id, status: 'ok', value: await body(schema.parse(args)) }` (after `JSON.parse` in the
 *   JSON variant). The smallest executor a user can write; the pipeline's target is ≤ 4× this.
 * - **floor** (bench/contractFloor.ts): the hand pool plus only the per-call work the `ToolResult`
 *   contract asks for — five clock reads for `timing`, the result, `timing` and `durations` frozen, the
 *   duplicate-id window, the args snapshot and deep freeze, the 19-field result — and no machinery.
 *   No implementation of the contract can be cheaper, so its ratio to the hand pool is the bound on
 *   the pipeline's; four more rows each leave one part out, to show what it costs, and one leaves all
 *   four out (the hand pool building the full result and nothing else).
 * - **stream floor** (bench/streamFloor.ts, issue 25): the floor's per-call work inside the least
 *   machinery an engine of the pipeline's shape needs (Observable in and out, a record and a context per
 *   call, a queue and slots, one timer for every call's time limit, a reorder) and no features. The
 *   pipeline's ratio to it is what its own features and seams cost; its own ratio to the floor is what
 *   the bare shape costs.
 * - **p-limit**: p-limit(10), the same schema with `safeParse`, the tool looked up by name in a Map, a
 *   result `{ id, index, status, value, content }` at the call's index (content by JSON.stringify, as a
 *   model needs text), `Promise.all`. Every call validated before it is queued, as the intake stage does.
 * - **rxjs**: a plain RxJS `from(calls)` + `mergeMap(…, 10)` (parse, body, `{ id, index, status, value }`)
 *   + a reorder back to model order + `toArray`, as a user would write it with RxJS alone. Measured
 *   here it is far slower than the pipeline: `from(array)` pushes all 100k calls at once, mergeMap
 *   buffers them in an array and takes each with `Array.prototype.shift`, which copies the rest of a
 *   large array every time (quadratic); the pipeline's pool queues in `src/util/fifo.ts` for this.
 * What the baselines leave out, and the pipeline pays for: frozen results with per-call timing and the
 * other `ToolResult` fields, duplicate-id detection, policies, timeouts/cancellation plumbing, bounded
 * reorder buffer.
 *
 * Method: warm-up rounds, then ROUNDS measured rounds; each round runs every variant once, in an order
 * rotated per round, so drift (JIT, heap growth, CPU clock) spreads over all variants alike. A young-
 * generation `gc({ type: 'minor' })` runs before every timed run when node has --expose-gc: a full
 * `gc()` also throws away optimized code, so every run started cold — which inflated the short hand
 * pool (≈ 2×: 0.6 against 0.3 µs a call) far more than the pipeline, and made a pushed 100k-call
 * batch look twice as costly as a pulled one. `BENCH_GC=full` restores the full collection. Reported: median time, min–max, calls/s, µs a call,
 * and each pipeline variant's median time divided by each baseline's median on the same workload (× hand,
 * × p-limit, × rxjs); the policy/events/limit/rateLimit variants also against the plain `pipeline.run`. Printed,
 * never asserted. Every run's results are checked (100k ok results, in order, right values); a failed
 * check exits non-zero.
 *
 * Quick mode (`--quick`, what `npm run bench` runs): 30k calls, 2 warm-up + 9 measured rounds, and only the
 * headline rows — the async workload's baselines (hand pool, floor, p-limit, rxjs) and the pipeline's
 * `run`, `operator()` and `events` — with the same ratios of medians taken in the same process.
 */
import pLimit from 'p-limit';
import { from, ignoreElements, lastValueFrom, map, mergeMap, Observable, type OperatorFunction, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, type ExecuteMiddleware, type PostPolicy, type PrePolicy, type ResultMiddleware, type ToolCall, type ToolResult } from '../src/index.js';
import { argsOf, collectGarbage, collectYoungGarbage, fmt, median, printHeader, QUICK } from './common.js';
import { ALL_PARTS, contractFloor, type FloorPart } from './contractFloor.js';
import { streamFloor } from './streamFloor.js';

const N = QUICK ? 30_000 : 100_000;
const CONCURRENCY = 10;
const WARMUP = 2;
// Quick mode's runs are short, so more of them make its medians steadier.
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? (QUICK ? 9 : 5)); // override: BENCH_ROUNDS=9 npm run bench:full

const input = z.object({ i: z.number() });
type Args = z.infer<typeof input>;
const asyncBody = async ({ i }: Args): Promise<number> => i; // an async no-op
const syncBody = ({ i }: Args): number => i; // a sync no-op

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
// The policy path: three pre-execute policies that pass every call on (as logging or metrics policies
// do: they look and return undefined) and one post-execute policy that accepts every result, as a
// ratio to the plain path (which skips the policy stages altogether).
const passPre = (name: string): PrePolicy => Object.defineProperty((() => undefined) as PrePolicy, 'name', { value: name });
const acceptPost: PostPolicy = Object.defineProperty((() => undefined) as PostPolicy, 'name', { value: 'acceptPost' });
const policyPipeline = createPipeline({ tools: [asyncTool], concurrency: CONCURRENCY, pre: [passPre('pre1'), passPre('pre2'), passPre('pre3')], post: [acceptPost] });
// The other two chains: one execute middleware that passes every attempt on (`return next()`, as a
// timer or a span does) and one result middleware that changes nothing, as a ratio to the plain path
// (which runs neither: its bodies are invoked directly and its results built at once).
const passExecute: ExecuteMiddleware = (_ctx, next) => next();
const passResult: ResultMiddleware = () => undefined;
const chainPipeline = createPipeline({ tools: [asyncTool], concurrency: CONCURRENCY, execute: [passExecute], result: [passResult] });
// The approval path: every call asked about (`askTools`, which delegates with `next()` first) and
// approved by an approver that answers at once, as a ratio to the plain path.
const askingPipeline = createPipeline({ tools: [asyncTool], concurrency: CONCURRENCY, pre: [askTools(['noop'])], approve: () => 'allowed-once' });
// `next()` used as an Observable (issue 26): one execute middleware that pipes an operator into it, so
// each output is its own stream of the body's one value (`streamed`, `[i]`), as a ratio to the plain
// path; and `return next()` around a sync body, which stays synchronous (no promise, no `Later`).
const pipedExecute: ExecuteMiddleware = (_ctx, next) => next().pipe(map((v) => v));
const pipedPipeline = createPipeline({ tools: [asyncTool], concurrency: CONCURRENCY, execute: [pipedExecute] });
const syncChainPipeline = createPipeline({ tools: [syncTool], concurrency: CONCURRENCY, execute: [passExecute] });

const objectCalls: ToolCall[] = Array.from({ length: N }, (_, i) => ({ id: 'c' + i, name: 'noop', args: { i } }));
const jsonCalls: ToolCall[] = Array.from({ length: N }, (_, i) => ({ id: 'c' + i, name: 'noop', args: `{"i":${i}}` }));

type Body = (args: Args) => unknown;
/** What `check` reads; the hand pool's results carry no index (their position is it). */
interface Checked {
  id: string;
  index?: number;
  status: string;
  value?: unknown;
  /** A streamed output's value is its items: here the body's one value, `[i]`. */
  streamed?: boolean;
}

/** The limit (issue 15): ten async workers pulling the next index. */
async function handPool(calls: readonly ToolCall[], body: Body): Promise<Checked[]> {
  const out = new Array<Checked>(calls.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < calls.length) {
      const k = next++;
      const { id, args } = calls[k]!;
      try {
        out[k] = { id, status: 'ok', value: await body(input.parse(argsOf(args))) };
      } catch (error) {
        out[k] = { id, status: 'error', value: error };
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return out;
}

interface BaselineResult {
  id: string;
  index: number;
  status: 'ok' | 'error';
  value?: unknown;
  content: string;
}

/** p-limit + zod + results by index + Promise.all. */
async function pLimitPool(calls: readonly ToolCall[], body: Body): Promise<BaselineResult[]> {
  const tools = new Map([['noop', { input, body }]]);
  const limit = pLimit(CONCURRENCY);
  const results = new Array<BaselineResult>(calls.length);
  const tasks: Promise<void>[] = [];
  for (let index = 0; index < calls.length; index++) {
    const { id, name, args } = calls[index]!;
    const tool = tools.get(name);
    const parsed = tool?.input.safeParse(argsOf(args));
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

/** Emits results in `index` order, holding the early ones (unbounded: the baseline's floor). */
function reorderByIndex<T extends { index: number }>(): OperatorFunction<T, T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const held = new Map<number, T>();
      let next = 0;
      return source.subscribe({
        next(result) {
          if (result.index !== next) {
            held.set(result.index, result);
            return;
          }
          subscriber.next(result);
          next++;
          for (let early = held.get(next); early !== undefined; early = held.get(next)) {
            held.delete(next++);
            subscriber.next(early);
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}

/** Plain RxJS: from + mergeMap(…, 10) + reorder + toArray. */
function rxjsPool(calls: readonly ToolCall[], body: Body): Promise<Checked[]> {
  return lastValueFrom(
    from(calls).pipe(
      mergeMap(async ({ id, args }: ToolCall, index: number) => ({ id, index, status: 'ok', value: await body(input.parse(argsOf(args))) }), CONCURRENCY),
      reorderByIndex(),
      toArray(),
    ),
  );
}

/** Same id, index (where the result carries one), status and value as the call asked for, for every call, in order. */
function check(label: string, results: readonly Checked[]): boolean {
  let bad = results.length === N ? -1 : results.length;
  for (let i = 0; bad < 0 && i < N; i++) {
    const r = results[i]!;
    const value = r.streamed === true && Array.isArray(r.value) && r.value.length === 1 ? (r.value as unknown[])[0] : r.value;
    if (r.id !== 'c' + i || (r.index !== undefined && r.index !== i) || r.status !== 'ok' || value !== i) bad = i;
  }
  if (bad >= 0) console.error(`CHECK FAILED: ${label}: ${results.length} results, first wrong at ${bad}:`, results[bad]);
  return bad < 0;
}

type Workload = 'async' | 'sync' | 'json';
const workloads: Record<Workload, { calls: readonly ToolCall[]; body: Body; label: string }> = {
  async: { calls: objectCalls, body: asyncBody, label: 'async body' },
  sync: { calls: objectCalls, body: syncBody, label: 'sync body' },
  json: { calls: jsonCalls, body: asyncBody, label: 'async, JSON args' },
};
const baselines = {
  hand: handPool,
  floor: contractFloor(input, CONCURRENCY, ALL_PARTS),
  'stream floor': streamFloor(input, CONCURRENCY),
  'p-limit': pLimitPool,
  rxjs: rxjsPool,
} as const;
type BaselineName = keyof typeof baselines;
const baselineNames = Object.keys(baselines) as BaselineName[];
const baselineVariant = (name: BaselineName, workload: Workload): string => `baseline ${name}, ${workloads[workload].label}`;

interface Variant {
  name: string;
  /** The workload whose baselines this variant is divided by (a baseline: by the faster baselines). */
  workload: Workload;
  /** Another variant this one is also divided by (the events/limit layers: by the plain path). */
  relativeTo?: string;
  run(): Promise<readonly Checked[]>;
}

/** The contract floor with only `parts` kept, on the async workload, over the whole floor. */
function floorWithout(left: string, parts: readonly FloorPart[]): Variant {
  const pool = contractFloor(input, CONCURRENCY, parts);
  return { name: `floor without ${left}, async body`, workload: 'async', relativeTo: baselineVariant('floor', 'async'), run: () => pool(objectCalls, asyncBody) };
}

const allVariants: Variant[] = [
  ...(['async', 'sync', 'json'] as const).flatMap((workload) =>
    baselineNames.map((name): Variant => ({ name: baselineVariant(name, workload), workload, run: () => baselines[name](workloads[workload].calls, workloads[workload].body) })),
  ),
  // What each part of the contract floor costs: the floor without it (and without all four), over the whole floor.
  ...ALL_PARTS.map((part) => floorWithout(part, ALL_PARTS.filter((p) => p !== part))),
  floorWithout('all four', []),
  { name: 'pipeline.run, async body', workload: 'async', run: () => asyncPipeline.run(objectCalls) },
  { name: 'operator()+toArray, async body', workload: 'async', run: () => lastValueFrom(from(objectCalls).pipe(asyncPipeline.operator(), toArray())) },
  {
    // The events layer: every call's received/decided/started/finished/result events, results kept.
    name: 'pipeline.events, async body',
    workload: 'async',
    relativeTo: 'pipeline.run, async body',
    run: async () => {
      const results: ToolResult[] = [];
      await lastValueFrom(asyncPipeline.events(objectCalls).pipe(tap((e) => e.type === 'result' && results.push(e.result)), ignoreElements()), { defaultValue: undefined });
      return results;
    },
  },
  { name: 'pipeline.run, async, 3 pre + 1 post policies', workload: 'async', relativeTo: 'pipeline.run, async body', run: () => policyPipeline.run(objectCalls) },
  { name: 'pipeline.run, async, askTools + sync approver', workload: 'async', relativeTo: 'pipeline.run, async body', run: () => askingPipeline.run(objectCalls) },
  { name: 'pipeline.run, async, 1 execute + 1 result middleware', workload: 'async', relativeTo: 'pipeline.run, async body', run: () => chainPipeline.run(objectCalls) },
  { name: 'pipeline.run, async, 1 execute next().pipe(map)', workload: 'async', relativeTo: 'pipeline.run, async body', run: () => pipedPipeline.run(objectCalls) },
  { name: 'pipeline.run, async, limit max 10', workload: 'async', relativeTo: 'pipeline.run, async body', run: () => limitAtConcurrency.run(objectCalls) },
  { name: 'pipeline.run, async, limit max 5', workload: 'async', relativeTo: 'pipeline.run, async body', run: () => limitAtHalf.run(objectCalls) },
  { name: 'pipeline.run, async, rateLimit never waits', workload: 'async', relativeTo: 'pipeline.run, async body', run: () => rateLimitedPipeline.run(objectCalls) },
  { name: 'pipeline.run, sync body', workload: 'sync', run: () => syncPipeline.run(objectCalls) },
  { name: 'pipeline.run, sync body, 1 execute', workload: 'sync', relativeTo: 'pipeline.run, sync body', run: () => syncChainPipeline.run(objectCalls) },
  { name: 'operator()+toArray, sync body', workload: 'sync', run: () => lastValueFrom(from(objectCalls).pipe(syncPipeline.operator(), toArray())) },
  { name: 'pipeline.run, async, JSON args', workload: 'json', run: () => asyncPipeline.run(jsonCalls) },
  { name: 'operator()+toArray, async, JSON args', workload: 'json', run: () => lastValueFrom(from(jsonCalls).pipe(asyncPipeline.operator(), toArray())) },
];

// BENCH_ONLY=<regex>: run only the variants whose name matches (and the baselines of their workloads),
// for a quick look while working on one path, e.g. BENCH_ONLY='run, async body'. Quick mode is such a
// look at the headline rows (their baselines come with them).
const QUICK_ROWS = /^(pipeline\.run|operator\(\)\+toArray|pipeline\.events), async body$|^baseline (hand|floor|p-limit|rxjs), async body$/;
const only = process.env['BENCH_ONLY'] === undefined ? (QUICK ? QUICK_ROWS : undefined) : new RegExp(process.env['BENCH_ONLY']);
const picked = allVariants.filter((v) => only === undefined || only.test(v.name));
const variants = allVariants.filter(
  (v) => picked.includes(v) || (v.name.startsWith('baseline ') && picked.some((p) => p.workload === v.workload && p !== v) && (only === undefined || /hand|floor|p-limit/.test(v.name) || only.test(v.name))),
);

async function main(): Promise<void> {
  printHeader(`overhead: ${N / 1000}k no-op parallel calls, concurrency ${CONCURRENCY}, ${WARMUP} warm-up + ${ROUNDS} measured rounds`);
  if (!(globalThis as { gc?: unknown }).gc) console.log('(no --expose-gc: rounds run without forced GC)');

  let ok = true;
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(k + round) % variants.length]!; // rotate the order each round
      (process.env['BENCH_GC'] === 'full' ? collectGarbage : collectYoungGarbage)();
      const start = performance.now();
      const results = await variant.run();
      const elapsed = performance.now() - start;
      if (round >= WARMUP) times.get(variant.name)!.push(elapsed);
      ok = check(variant.name, results) && ok; // every run, outside the timed region
    }
  }

  const medians = new Map([...times].map(([name, t]) => [name, median(t)]));
  const ratio = (ms: number, other: string): string => (medians.has(other) ? fmt(ms / medians.get(other)!, 2) : '—');
  console.table(
    variants.map((v) => {
      const t = times.get(v.name)!;
      const ms = medians.get(v.name)!;
      const row: Record<string, string> = {
        variant: v.name,
        'median ms': fmt(ms),
        'min–max ms': `${fmt(Math.min(...t))}–${fmt(Math.max(...t))}`,
        'median calls/s': Math.round((N / ms) * 1000).toLocaleString('en-US'),
        'µs/call': fmt((ms * 1000) / N, 2),
      };
      for (const name of baselineNames) {
        const other = baselineVariant(name, v.workload);
        row[`× ${name}`] = other === v.name ? '—' : ratio(ms, other);
      }
      row['× reference'] = v.relativeTo ? ratio(ms, v.relativeTo) : '—';
      return row;
    }),
  );
  console.log('× hand / × p-limit / × rxjs: median time over that baseline\'s median on the same workload (issue 15 target for pipeline.run and operator(): × hand ≤ 4; informational, not asserted)');
  console.log('× floor: over the contract floor (bench/contractFloor.ts: the hand pool plus only what the ToolResult contract asks for per call — clock reads, frozen result/timing/durations, the duplicate-id window, the args snapshot — and no machinery); the floor\'s own × hand bounds what any implementation of the contract reaches');
  console.log('× stream floor: over the stream floor (bench/streamFloor.ts: the floor\'s per-call work in the least machinery of the pipeline\'s shape — Observable in and out, a record and context per call, slots, one deadline timer, a reorder — and no features)');
  console.log('× reference: the policy path\'s (3 pass-through pre + 1 post), the events layer\'s, a limit\'s and a rate limit\'s own cost over pipeline.run on the same workload; a floor without one part over the whole floor (below 1: what that part costs)');
  console.log(`sanity: every variant returned ${N} ok results in input order with the right values: ${ok ? 'yes' : 'NO'}`);
  if (QUICK) console.log('quick mode: the headline rows at 30k calls; every row (sync body, JSON args, policies, chains, limits) at 100k: npm run bench:full');
  if (!ok) process.exitCode = 1;
}

await main();
