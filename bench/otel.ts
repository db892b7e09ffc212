/**
 * Tracing bench (issue 27): what `toolTracing()` (`toolstream/otel`) costs per call.
 *
 * Workload: N no-op calls (one parallel tool, an async body that returns its argument, the schema
 * `z.object({ i: z.number() })`), concurrency 10, through `pipeline.run`. Three variants on the same
 * calls:
 * - **plain**: no tracing layer (what every pipeline without `toolTracing` runs: the layer is not there);
 * - **no-op tracer**: `observers: [toolTracing()]` with `@opentelemetry/api` alone (no SDK: the API's
 *   no-op tracer and context manager) — the cost of the layer's own work per call (hooks, a span
 *   object, a map entry, `context.with`);
 * - **pass-through** (a reference): no tracing, one execute middleware `(ctx, next) => next()` — what
 *   the execute chain around the body costs, which the layer needs for `context.with`;
 * - **SDK**: the same with the OpenTelemetry SDK's `BasicTracerProvider` (no span processor, so nothing
 *   is exported) and the `AsyncLocalStorageContextManager` — real spans and real context propagation.
 *
 * Method as in bench/overhead.ts: WARMUP rounds, then ROUNDS rounds, each running every variant once in
 * an order rotated per round; a young-generation gc before each timed run (--expose-gc). Reported: the
 * median time per call of each variant and its median divided by plain's. Printed, never asserted; a run
 * whose results are not N ok results in order exits non-zero.
 *
 * Run: `npx esbuild bench/otel.ts --bundle --platform=node --format=esm --target=node20 --packages=external --outfile=.bench/otel.js && node --expose-gc .bench/otel.js`
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from '../src/index.js';
import { toolTracing } from '../src/otel/index.js';
import { collectYoungGarbage, fmt, median, printHeader } from './common.js';

const N = Number(process.env['BENCH_CALLS'] ?? 20_000);
const WARMUP = 2;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 7);

const tool = defineTool({ name: 'noop', description: 'nothing', input: z.object({ i: z.number() }), mode: 'parallel', execute: async ({ i }) => i });
const calls: ToolCall[] = Array.from({ length: N }, (_, i) => ({ id: `c${i}`, name: 'noop', args: { i } }));
const sdkTracer = new BasicTracerProvider().getTracer('bench');
const asyncContext = new AsyncLocalStorageContextManager();

interface Variant {
  readonly name: string;
  readonly run: () => Promise<void>;
}

const through = (pipeline: ReturnType<typeof createPipeline>, setUp: () => void) => async () => {
  context.disable(); // the API's no-op context manager unless the variant sets one
  setUp();
  const results = await pipeline.run(calls);
  if (results.length !== N || results.some((result, i) => result.status !== 'ok' || result.value !== i)) {
    console.error('a run gave wrong results');
    process.exit(1);
  }
};

const variants: Variant[] = [
  { name: 'plain', run: through(createPipeline({ tools: [tool], concurrency: 10 }), () => undefined) },
  // For reference: what any execute middleware costs (the chain around the body, which toolTracing needs for context.with).
  { name: 'pass-through', run: through(createPipeline({ tools: [tool], concurrency: 10, execute: [(_ctx, next) => next()] }), () => undefined) },
  { name: 'no-op tracer', run: through(createPipeline({ tools: [tool], concurrency: 10, observers: [toolTracing({ tracer: trace.getTracer('bench') })] }), () => undefined) },
  {
    name: 'SDK',
    run: through(createPipeline({ tools: [tool], concurrency: 10, observers: [toolTracing({ tracer: sdkTracer })] }), () => {
      context.setGlobalContextManager(asyncContext.enable());
    }),
  },
];

// BENCH_ONLY=name,name runs only those variants (a profile of one, say).
const only = process.env['BENCH_ONLY']?.split(',');
if (only !== undefined) variants.splice(0, variants.length, ...variants.filter((variant) => only.includes(variant.name)));
printHeader(`toolTracing overhead: ${N} no-op calls, concurrency 10, ${ROUNDS} rounds`);
const times = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  for (let k = 0; k < variants.length; k++) {
    const variant = variants[(round + k) % variants.length]!;
    collectYoungGarbage();
    const started = performance.now();
    await variant.run();
    const ms = performance.now() - started;
    if (round >= WARMUP) times.get(variant.name)!.push(ms);
  }
}
const plain = median(times.get('plain') ?? times.get(variants[0]!.name)!);
for (const variant of variants) {
  const all = times.get(variant.name)!;
  const ms = median(all);
  console.log(`${variant.name.padEnd(13)} ${fmt((ms * 1000) / N, 2)} µs/call  (median ${fmt(ms)} ms, ${fmt(Math.min(...all))}–${fmt(Math.max(...all))})  × plain ${fmt(ms / plain, 2)}`);
}
