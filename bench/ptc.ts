/**
 * Programmatic tool calling bench: what running a program costs, and what each of its tool calls costs
 * on top of the same call made directly through the pipeline, in the same batching.
 *
 * Setup: one QuickJS runtime (poolSize 1, so every run lands on the same warm worker), one parallel
 * no-op tool `noop` (an async identity), and a pipeline with `noop` and `run_code` (maxParallelSubCalls
 * 10, concurrency 10).
 *
 * How a program's sub-calls reach the pipeline (src/ptc/subCalls.ts, src/ptc/quickjs/workerSlot.ts):
 * each `run_code` call opens ONE batch for all of its sub-calls (a `SubCalls`: a Subject piped through
 * the pipeline's stages, concurrency maxParallelSubCalls). There is no per-flush batching: each
 * `tools.noop(…)` is its own `call` message from the worker, and the main thread pushes it into that
 * batch when the message is handled. Node drains microtasks after each message, and a no-op call
 * finishes within them, so each sub-call's result is out before the next sub-call arrives — with
 * `Promise.all` too (the worker posts all N messages at once, but they are handled one at a time). So
 * both programs here reach the pipeline as one batch of N calls, one in flight at a time; the 10-way
 * concurrency never comes into play. (Found by instrumenting SubCalls: 1 batch of 1000 calls per
 * program, at most 1 call waiting; the bench re-checks it every run with a probe tool that yields
 * before returning, and prints the most calls in flight at once, program and baselines alike.)
 *
 * Figures (ROUNDS measured rounds after WARMUP, variants in an order rotated per round):
 * - warm run: `runtime.run({ program: 'return 1' })` back to back, per run; and an empty program
 *   (`return 0`) as a `run_code` call through the pipeline (adds intake, policies, the sub-call batch and
 *   the result); each the median of RUNS back-to-back runs per round. Target ≤ 5 ms.
 * - per call, program: a program making N calls (`Promise.all`, or awaited one after another), minus that
 *   round's empty program (the median of its RUNS samples, so one slow sample does not skew it), / N.
 * - per call, direct, matched: N calls in one batch (one `pipeline.operator()` subscription on a Subject),
 *   each pushed once the previous one's result is out: the batching both programs' sub-calls get. The
 *   overheads (target ≤ 200 µs per sub-call) and ratios are against this baseline.
 * - for reference, not matched: N calls in one `pipeline.run` (all pushed at once, 10 in flight: the
 *   pipeline's best throughput, which the programs here never reach), and N calls each in its own
 *   `pipeline.run` (N batches of one, as a model's calls arrive one turn at a time: each pays a batch's
 *   setup, which a program's sub-calls do not).
 * Each per-call figure and overhead is computed per round (the program and its empty program from the
 * same round); printed as the median over rounds with the min–max over rounds. Printed, never asserted.
 * Results are checked (values and statuses); a failed check exits non-zero.
 *
 * Between variants only the young generation is collected: a forced full `gc()` throws away V8's optimized
 * code (see `collectYoungGarbage`), and a variant here is only N = 1000 calls, so each would be timed
 * cold (measured on Node 20 with a full `gc()` instead: the direct per-call figures 12–18× higher, the
 * programs' about 1.5×, so the overheads came out lower and the ratios far lower than warm).
 */
import { Subject } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, runCodeTool, type Pipeline, type ToolCall } from '../src/index.js';
import { createQuickJSRuntime } from '../src/ptc/quickjs/index.js';
import { collectYoungGarbage, fmt, median, printHeader } from './common.js';

const N = 1_000; // the runtime allows 1000 pending tool calls per program
const RUNS = 200;
const WARMUP = 2;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const CONCURRENCY = 10;

const runtime = createQuickJSRuntime({ poolSize: 1, timeoutMs: 120_000 });
const input = z.object({ x: z.number() });
const noop = defineTool({ name: 'noop', description: 'no-op', input, mode: 'parallel', execute: async ({ x }) => x });
const pipelineOf = (tool: typeof noop): Pipeline =>
  createPipeline({ tools: [tool, runCodeTool({ runtime, maxParallelSubCalls: CONCURRENCY })], concurrency: CONCURRENCY });
const pipeline = pipelineOf(noop);

// The probe: `noop` counting the calls in flight, yielding once so that a call arriving meanwhile overlaps.
let inFlight = 0;
let mostInFlight = 0;
const probe = defineTool({
  name: 'noop',
  description: 'no-op',
  input,
  mode: 'parallel',
  execute: async ({ x }) => {
    mostInFlight = Math.max(mostInFlight, ++inFlight);
    await null;
    inFlight--;
    return x;
  },
});
const probePipeline = pipelineOf(probe);

function check(condition: boolean, what: string): void {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

const sum = (N * (N - 1)) / 2;
const call = (id: string, x: number): ToolCall => ({ id, name: 'noop', args: { x } });
const checkSum = (values: readonly unknown[], what: string) => check(values.length === N && values.reduce<number>((a, v) => a + (v as number), 0) === sum, what);

async function program(on: Pipeline, source: string, expected: unknown): Promise<number> {
  const t0 = performance.now();
  const [result] = await on.run([{ id: 'p', name: 'run_code', args: { program: source } }]);
  const ms = performance.now() - t0;
  check(result?.status === 'ok' && JSON.stringify((result.value as { value: unknown }).value) === JSON.stringify(expected), `program result ${result?.content}`);
  return ms;
}

const parallelProgram = `const xs = await Promise.all(Array.from({ length: ${N} }, (_, x) => tools.noop({ x }))); return xs.reduce((a, b) => a + b, 0)`;
const sequentialProgram = `let s = 0; for (let x = 0; x < ${N}; x++) s += await tools.noop({ x }); return s`;

/** N calls in one batch, each pushed (in a microtask, not inside the pipeline's emit) once the previous result is out. */
function oneBatchOneAtATime(on: Pipeline): Promise<number> {
  return new Promise((resolve, reject) => {
    const calls = new Subject<ToolCall>();
    const values: unknown[] = [];
    const t0 = performance.now();
    calls.pipe(on.operator()).subscribe({
      next: (result) => {
        values.push(result.status === 'ok' ? result.value : NaN);
        const x = values.length;
        if (x < N) queueMicrotask(() => calls.next(call(`o${x}`, x)));
        else calls.complete();
      },
      error: reject,
      complete: () => {
        const ms = performance.now() - t0;
        checkSum(values, 'one-at-a-time direct results');
        resolve(ms);
      },
    });
    calls.next(call('o0', 0));
  });
}

const allCalls: ToolCall[] = Array.from({ length: N }, (_, x) => call(`d${x}`, x));
async function oneBatchAllAtOnce(on: Pipeline): Promise<number> {
  const t0 = performance.now();
  const results = await on.run(allCalls);
  const ms = performance.now() - t0;
  check(results.every((r, x) => r.status === 'ok' && r.value === x), 'all-at-once direct results');
  return ms;
}

async function batchesOfOne(on: Pipeline): Promise<number> {
  const t0 = performance.now();
  const values: unknown[] = [];
  for (let x = 0; x < N; x++) {
    const [result] = await on.run([call(`s${x}`, x)]);
    values.push(result?.status === 'ok' ? result.value : NaN);
  }
  const ms = performance.now() - t0;
  checkSum(values, 'batches-of-one direct results');
  return ms;
}

/** Per-run milliseconds of RUNS back-to-back runs (median of the runs). */
async function warmRuns(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  return median(times);
}

const V = {
  runtime: 'warm run: runtime.run',
  empty: 'warm run: run_code via pipeline (empty program)',
  parallel: 'program: N sub-calls, Promise.all',
  sequential: 'program: N sub-calls, one after another',
  matched: 'direct: one batch, one call at a time',
  allAtOnce: 'direct: one batch, all N at once',
  batchesOfOne: 'direct: N batches of one',
} as const;
type VariantName = (typeof V)[keyof typeof V];

const variants: Record<VariantName, () => Promise<number>> = {
  [V.runtime]: () => warmRuns(() => runtime.run({ program: 'return 1', bindings: [] })),
  [V.empty]: () => warmRuns(() => program(pipeline, 'return 0', 0)),
  [V.parallel]: () => program(pipeline, parallelProgram, sum),
  [V.sequential]: () => program(pipeline, sequentialProgram, sum),
  [V.matched]: () => oneBatchOneAtATime(pipeline),
  [V.allAtOnce]: () => oneBatchAllAtOnce(pipeline),
  [V.batchesOfOne]: () => batchesOfOne(pipeline),
};

/** The most probe calls in flight at once during `run` (untimed). */
async function inFlightDuring(run: (on: Pipeline) => Promise<unknown>): Promise<number> {
  mostInFlight = 0;
  await run(probePipeline);
  return mostInFlight;
}

async function main(): Promise<void> {
  printHeader(`Programmatic tool calling: warm run cost and per-sub-call overhead (N = ${N}, ${WARMUP} warm-up + ${ROUNDS} measured rounds)`);
  if (!(globalThis as { gc?: unknown }).gc) console.log('(no --expose-gc: rounds run without collecting the young generation)');

  const inFlightOf = {
    parallel: await inFlightDuring((on) => program(on, parallelProgram, sum)),
    sequential: await inFlightDuring((on) => program(on, sequentialProgram, sum)),
    matched: await inFlightDuring(oneBatchOneAtATime),
    allAtOnce: await inFlightDuring(oneBatchAllAtOnce),
    batchesOfOne: await inFlightDuring(batchesOfOne),
  };
  console.log(
    `most calls in flight at once: program Promise.all ${inFlightOf.parallel}, program one after another ${inFlightOf.sequential}; ` +
      `direct one at a time ${inFlightOf.matched}, all at once ${inFlightOf.allAtOnce}, batches of one ${inFlightOf.batchesOfOne}`,
  );
  if (inFlightOf.parallel !== inFlightOf.matched || inFlightOf.sequential !== inFlightOf.matched) {
    console.log('NOTE: the programs\' sub-calls no longer run one at a time: the matched baseline does not match them; update this bench.');
  }

  const names = Object.keys(variants) as VariantName[];
  const times = new Map<VariantName, number[]>(names.map((name) => [name, []]));
  for (let round = -WARMUP; round < ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + Math.max(round, 0)) % names.length]!;
      collectYoungGarbage();
      const ms = await variants[name]();
      if (round >= 0) times.get(name)!.push(ms);
    }
  }

  const t = (name: VariantName): readonly number[] => times.get(name)!;
  /** µs per call, per round; a program's minus its round's empty program. */
  const perCall = (name: VariantName): number[] => {
    const empty = name === V.parallel || name === V.sequential ? t(V.empty) : undefined;
    return t(name).map((ms, round) => ((ms - (empty?.[round] ?? 0)) / N) * 1000);
  };
  const spread = (values: readonly number[], digits: number) => `${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)}`;

  const rows: [string, string, string, string][] = [];
  for (const name of [V.runtime, V.empty]) {
    const value = median(t(name));
    rows.push([name, `${fmt(value, 2)} ms`, spread(t(name), 2), `target ≤ 5 ms: ${value <= 5 ? 'met' : 'MISSED'}`]);
  }
  const matched = perCall(V.matched);
  const rowOf = (label: string, values: readonly number[], note = ''): void => void rows.push([label, `${fmt(median(values))} µs`, spread(values, 1), note]);
  rowOf('per call, program: Promise.all', perCall(V.parallel));
  rowOf('per call, program: one after another', perCall(V.sequential));
  rowOf('per call, direct: one batch, one at a time', matched, 'matched: the programs\' batching');
  rowOf('per call, direct: one batch, all N at once', perCall(V.allAtOnce), `reference: ${inFlightOf.allAtOnce} in flight`);
  rowOf('per call, direct: N batches of one', perCall(V.batchesOfOne), 'reference: a pipeline.run each');
  for (const [name, label] of [
    [V.parallel, 'Promise.all'],
    [V.sequential, 'one after another'],
  ] as const) {
    const program = perCall(name);
    const overhead = program.map((us, round) => us - matched[round]!);
    const value = median(overhead);
    rowOf(`overhead per sub-call, ${label}`, overhead, `target ≤ 200 µs: ${value <= 200 ? 'met' : 'MISSED'} (ratio ${fmt(median(program) / median(matched), 2)}×)`);
  }

  const header: [string, string, string, string] = ['', 'median', 'min–max', ''];
  const width = Math.max(...rows.map(([label]) => label.length));
  const valueWidth = Math.max(...rows.map(([, value]) => value.length));
  const spreadWidth = Math.max(...[header, ...rows].map(([, , range]) => range.length));
  for (const [label, value, range, note] of [header, ...rows]) {
    console.log(`${label.padEnd(width)}  ${value.padStart(valueWidth)}  ${range.padStart(spreadWidth)}  ${note}`.trimEnd());
  }
  await runtime.close();
}

await main();
