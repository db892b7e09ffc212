import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromOpenAIResponsesStream } from '../../../src/adapters/openai/index.js';
import { functionCall, response, sequence, type Unnumbered } from './helpers.js';

/**
 * A response with `n` function calls open at once: every item added first, then one argument delta
 * each, then (`ending: 'done'`) each call's `.done`, or (`'completed'`) only `response.completed`
 * holding them all whole.
 */
function manyOpenCalls(n: number, ending: 'done' | 'completed'): ResponseStreamEvent[] {
  const ids = Array.from({ length: n }, (_, i) => i);
  const events: Unnumbered[] = [
    ...ids.map((i): Unnumbered => ({ type: 'response.output_item.added', output_index: i, item: functionCall(`fc_${i}`, `call_${i}`, 'noop', '', 'in_progress') })),
    ...ids.map((i): Unnumbered => ({ type: 'response.function_call_arguments.delta', item_id: `fc_${i}`, output_index: i, delta: `{"i":${i}}` })),
    ...(ending === 'done'
      ? ids.map((i): Unnumbered => ({ type: 'response.function_call_arguments.done', item_id: `fc_${i}`, output_index: i, name: 'noop', arguments: `{"i":${i}}` }))
      : []),
    { type: 'response.completed', response: response('completed', ids.map((i) => functionCall(`fc_${i}`, `call_${i}`, 'noop', `{"i":${i}}`))) },
  ];
  return sequence(events);
}

/**
 * Milliseconds to push the events through the adapter (synchronously), checking every call came out;
 * `Infinity` as soon as more than `budgetMs` have passed.
 */
function time(events: readonly ResponseStreamEvent[], n: number, budgetMs = Infinity): number {
  const source = new Subject<ResponseStreamEvent>();
  let count = 0;
  fromOpenAIResponsesStream(source).subscribe(() => count++);
  const started = performance.now();
  for (let i = 0; i < events.length; i++) {
    source.next(events[i]!);
    if (i % 1024 === 0 && performance.now() - started > budgetMs) return Infinity;
  }
  expect(count).toBe(n);
  return performance.now() - started;
}

describe('fromOpenAIResponsesStream: cost is linear in the calls open at once', () => {
  // Wall-clock on purpose, as a ratio measured in the same run (so a busy machine slows both sides): ten
  // times the calls open at once take about ten times as long when each event finds its call in
  // constant time, and about a hundred times when each event scans or copies the list of open calls
  // (before the fix 5k took 0.6 s and 20k 8–18 s). 30 leaves room for noise on either measurement and
  // fails long before the quadratic scan's 100. The ratios are measured in bench/adapters.ts too.
  it.each(['done', 'completed'] as const)('50k calls open at once, each ended by %s, take under 30 times what 5k take', (ending) => {
    const small = manyOpenCalls(5_000, ending);
    time(small, 5_000); // warm-up
    const smallMs = Math.min(time(small, 5_000), time(small, 5_000), time(small, 5_000)); // the least disturbed of three
    // The larger one, like the smaller, the less disturbed of its tries: a second only when the first went
    // over (once at load 9, beside a second test run). A quadratic scan is over on every try.
    const large = manyOpenCalls(50_000, ending);
    const tryLarge = () => time(large, 50_000, 30 * smallMs);
    const first = tryLarge();
    const largeMs = first < 30 * smallMs ? first : Math.min(first, tryLarge());
    expect(largeMs / smallMs).toBeLessThan(30);
  });
});
