/**
 * Adapter bench: what reading a Responses stream costs as the calls open at once grow.
 *
 * Workload: one response with N function calls open at once (servers that stream calls in parallel):
 * N `response.output_item.added`, then one `response.function_call_arguments.delta` each, then each
 * call's `response.function_call_arguments.done` (variant "done"), or only `response.completed`
 * holding every call whole (variant "completed"). The events are built before timing and pushed
 * synchronously through a Subject into `fromOpenAIResponsesStream`; the calls are counted, not run, so
 * the figure is the adapter alone.
 *
 * Method: a warm-up run, then ROUNDS measured rounds per size and variant, `gc()` before each timed
 * run when node has --expose-gc. Reported: median time and µs per call. Linear code keeps µs/call
 * flat as N grows (up to cache and GC effects, and JIT warm-up at the smallest size); quadratic code —
 * a list scanned and copied per event, as before — multiplies it by N (before: 1k 12–74 ms, 5k 0.6 s,
 * 20k 8–18 s). Sizes: BENCH_SIZES=1000,5000 (comma-separated). A wrong call count exits non-zero.
 */
import { Subject } from 'rxjs';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { fromOpenAIResponsesStream } from '../src/adapters/openai/index.js';
import { collectGarbage, fmt, median, printHeader } from './common.js';

const SIZES = (process.env['BENCH_SIZES'] ?? '1000,5000,20000,50000').split(',').map(Number);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);

function manyOpenCalls(n: number, ending: 'done' | 'completed'): ResponseStreamEvent[] {
  const item = (i: number, args: string, status: 'in_progress' | 'completed') =>
    ({ type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name: 'noop', arguments: args, status }) as const;
  const events: unknown[] = [];
  for (let i = 0; i < n; i++) events.push({ type: 'response.output_item.added', output_index: i, item: item(i, '', 'in_progress') });
  for (let i = 0; i < n; i++) events.push({ type: 'response.function_call_arguments.delta', item_id: `fc_${i}`, output_index: i, delta: `{"i":${i}}` });
  if (ending === 'done') {
    for (let i = 0; i < n; i++) events.push({ type: 'response.function_call_arguments.done', item_id: `fc_${i}`, output_index: i, name: 'noop', arguments: `{"i":${i}}` });
  }
  const output = Array.from({ length: n }, (_, i) => item(i, `{"i":${i}}`, 'completed'));
  events.push({ type: 'response.completed', response: { id: 'resp_bench', status: 'completed', output } });
  return events.map((event, sequence_number) => ({ ...(event as object), sequence_number }) as ResponseStreamEvent);
}

function timeOnce(events: readonly ResponseStreamEvent[], n: number): number {
  const source = new Subject<ResponseStreamEvent>();
  let count = 0;
  fromOpenAIResponsesStream(source).subscribe(() => count++);
  collectGarbage();
  const started = performance.now();
  for (const event of events) source.next(event);
  const elapsed = performance.now() - started;
  if (count !== n) {
    console.error(`expected ${n} calls, got ${count}`);
    process.exit(1);
  }
  return elapsed;
}

printHeader(`Adapter bench: fromOpenAIResponsesStream with N calls open at once (medians of ${ROUNDS})`);
for (const ending of ['done', 'completed'] as const) {
  console.log(`\nvariant "${ending}"`);
  console.log('| calls open | median ms | µs/call |');
  console.log('|---|---|---|');
  for (const n of SIZES) {
    const events = manyOpenCalls(n, ending);
    timeOnce(events, n); // warm-up
    const ms = median(Array.from({ length: ROUNDS }, () => timeOnce(events, n)));
    console.log(`| ${n} | ${fmt(ms, 2)} | ${fmt((ms * 1000) / n, 2)} |`);
  }
}
