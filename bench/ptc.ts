/**
 * Programmatic tool calling bench: what running a program costs, and what each of its tool calls costs
 * on top of the same call made directly through the pipeline.
 *
 * Setup: one QuickJS runtime (poolSize 1, so every run lands on the same warm worker), one parallel
 * no-op tool `noop` (an async identity), and a pipeline with `noop` and `run_code`.
 *
 * Figures (medians over ROUNDS rounds, variants in an order rotated per round):
 * - warm run: `runtime.run({ program: 'return 1' })` back to back, per run; and the same program as a
 *   `run_code` call through the pipeline (adds intake, policies, the sub-call batch and the result).
 *   Target ≤ 5 ms.
 * - per sub-call, parallel: a program making N calls with `Promise.all` (maxParallelSubCalls 10),
 *   minus an empty program, divided by N; against N direct calls in one `pipeline.run` (concurrency 10).
 * - per sub-call, sequential: a program awaiting N calls one after another; against N direct calls made
 *   one after another, each its own `pipeline.run` (how a model's calls arrive, one turn at a time, is
 *   slower still; this is the cheapest direct sequential form).
 * The overhead is the difference per call (target ≤ 200 µs), printed, never asserted. Results are
 * checked (values and statuses); a failed check exits non-zero.
 */
import { z } from 'zod';
import { createPipeline, defineTool, runCodeTool, type ToolCall } from '../src/index.js';
import { createQuickJSRuntime } from '../src/ptc/quickjs/index.js';
import { collectGarbage, fmt, median, printHeader } from './common.js';

const N = 1_000; // the runtime allows 1000 pending tool calls per program
const RUNS = 200;
const WARMUP = 1;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);

const runtime = createQuickJSRuntime({ poolSize: 1, timeoutMs: 120_000 });
const noop = defineTool({ name: 'noop', description: 'no-op', input: z.object({ x: z.number() }), mode: 'parallel', execute: async ({ x }) => x });
const pipeline = createPipeline({ tools: [noop, runCodeTool({ runtime, maxParallelSubCalls: 10 })], concurrency: 10 });

function check(condition: boolean, what: string): void {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

async function program(source: string, expected: unknown): Promise<number> {
  const t0 = performance.now();
  const [result] = await pipeline.run([{ id: 'p', name: 'run_code', args: { program: source } }]);
  const ms = performance.now() - t0;
  check(result?.status === 'ok' && JSON.stringify((result.value as { value: unknown }).value) === JSON.stringify(expected), `program result ${result?.content}`);
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

const sum = (N * (N - 1)) / 2;
const variants: Record<string, () => Promise<number>> = {
  'warm run: runtime.run': () => warmRuns(() => runtime.run({ program: 'return 1', bindings: [] })),
  'warm run: run_code via pipeline': () => warmRuns(() => program('return 1', 1)),
  'empty program (for the per-call figures)': () => program('return 0', 0),
  'program: N sub-calls, Promise.all': () =>
    program(`const xs = await Promise.all(Array.from({ length: ${N} }, (_, x) => tools.noop({ x }))); return xs.reduce((a, b) => a + b, 0)`, sum),
  'direct: N calls in one pipeline.run': async () => {
    const calls: ToolCall[] = Array.from({ length: N }, (_, x) => ({ id: `d${x}`, name: 'noop', args: { x } }));
    const t0 = performance.now();
    const results = await pipeline.run(calls);
    const ms = performance.now() - t0;
    check(results.every((r, x) => r.status === 'ok' && r.value === x), 'direct results');
    return ms;
  },
  'program: N sub-calls, one after another': () =>
    program(`let s = 0; for (let x = 0; x < ${N}; x++) s += await tools.noop({ x }); return s`, sum),
  'direct: N calls, one pipeline.run each': async () => {
    const t0 = performance.now();
    let s = 0;
    for (let x = 0; x < N; x++) {
      const [result] = await pipeline.run([{ id: `s${x}`, name: 'noop', args: { x } }]);
      s += result!.value as number;
    }
    const ms = performance.now() - t0;
    check(s === sum, 'sequential direct results');
    return ms;
  },
};

async function main(): Promise<void> {
  printHeader(`Programmatic tool calling: warm run cost and per-sub-call overhead (N = ${N}, ${ROUNDS} rounds)`);
  const names = Object.keys(variants);
  const times = new Map<string, number[]>(names.map((name) => [name, []]));
  for (let round = -WARMUP; round < ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + Math.max(round, 0)) % names.length]!;
      collectGarbage();
      const ms = await variants[name]!();
      if (round >= 0) times.get(name)!.push(ms);
    }
  }
  const m = (name: string) => median(times.get(name)!);
  const empty = m('empty program (for the per-call figures)');
  const perCall = (name: string) => ((m(name) - (name.startsWith('program') ? empty : 0)) / N) * 1000;
  const rows: [string, string, string][] = [
    ['warm run: runtime.run', `${fmt(m('warm run: runtime.run'), 2)} ms`, `target ≤ 5 ms: ${m('warm run: runtime.run') <= 5 ? 'met' : 'MISSED'}`],
    ['warm run: run_code via pipeline', `${fmt(m('warm run: run_code via pipeline'), 2)} ms`, `target ≤ 5 ms: ${m('warm run: run_code via pipeline') <= 5 ? 'met' : 'MISSED'}`],
  ];
  for (const [program, direct, label] of [
    ['program: N sub-calls, Promise.all', 'direct: N calls in one pipeline.run', 'parallel'],
    ['program: N sub-calls, one after another', 'direct: N calls, one pipeline.run each', 'sequential'],
  ] as const) {
    const overhead = perCall(program) - perCall(direct);
    rows.push([`per call, ${label}: program`, `${fmt(perCall(program))} µs`, '']);
    rows.push([`per call, ${label}: direct`, `${fmt(perCall(direct))} µs`, '']);
    rows.push([`overhead per sub-call, ${label}`, `${fmt(overhead)} µs`, `target ≤ 200 µs: ${overhead <= 200 ? 'met' : 'MISSED'} (ratio ${fmt(perCall(program) / perCall(direct), 2)}×)`]);
  }
  const width = Math.max(...rows.map(([label]) => label.length));
  for (const [label, value, note] of rows) console.log(`${label.padEnd(width)}  ${value.padStart(10)}  ${note}`);
  await runtime.close();
}

await main();
