import { map, of, retry, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type PipelineOptions, type ResultDraft, type ResultMiddleware, type ToolCall, type ToolResult } from '../../src/index.js';

// The result chain in virtual time: a middleware answering with an Observable finishes the result at
// the frame its first value comes; one that never answers is unsubscribed at policyTimeoutMs.

const input = z.object({ text: z.string() });
const echo = defineTool({ name: 'echo', description: 'echo', input, mode: 'parallel', execute: ({ text }) => text });
const call = (id: string): ToolCall => ({ id, name: 'echo', args: { text: id } });
const named = (name: string, middleware: ResultMiddleware): ResultMiddleware => Object.defineProperty(middleware, 'name', { value: name });

/** Each result as `id:status[:code]`. */
const status = (r: ToolResult) => [r.id, r.status, r.error?.code].filter((part) => part !== undefined).join(':');
const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

function through(scheduler: TestScheduler, options: Omit<PipelineOptions, 'tools' | 'scheduler'>, calls: Observable<ToolCall>, kept: ToolResult[] = []) {
  const pipeline = createPipeline({ tools: [echo], scheduler, ...options });
  return calls.pipe(pipeline.operator(), map((result) => (kept.push(result), status(result))));
}

describe('result middleware answering with an Observable (virtual time)', () => {
  it('timer(5).pipe(map(() => draft)) finishes the result at +5, with what it changed', () => {
    const kept: ToolResult[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const slow = named('slow', (draft) =>
        timer(5).pipe(
          map((): ResultDraft => {
            draft.meta.checkedAt = scheduler.now();
            return draft;
          }),
        ),
      );
      expectObservable(through(scheduler, { result: [slow] }, cold('-a|', { a: call('a') }), kept)).toBe('------(a|)', { a: 'a:ok' });
    });
    expect(kept[0]?.meta).toEqual({ checkedAt: 6 });
  });

  it('a middleware that never answers is unsubscribed at policyTimeoutMs, and the output withheld', () => {
    const kept: ToolResult[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const never$ = cold<ResultDraft>('-');
      const stuck = named('stuck', () => never$);
      expectObservable(through(scheduler, { result: [stuck], policyTimeoutMs: 25 }, cold('a|', { a: call('a') }), kept)).toBe('25ms (a|)', { a: 'a:error:policy_error' });
      expectSubscriptions(never$.subscriptions).toBe('^ 24ms !');
    });
    expect(kept[0]?.content).toBe('The output of "echo" was withheld: result middleware "stuck" did not decide within 25 ms (middleware fail closed).');
  });

  it('next().pipe(...) stays synchronous; a retry of a failed next() is refused and traced', () => {
    const kept: ToolResult[] = [];
    const upper = named('upper', (draft, next) => next().pipe(map(() => ((draft.content = draft.content.toUpperCase()), draft))));
    const twice = named('twice', (_draft, next) => {
      void next();
      return next().pipe(retry(1));
    });
    of(call('a')).pipe(createPipeline({ tools: [echo], result: [upper] }).operator()).subscribe((r) => kept.push(r));
    of(call('b')).pipe(createPipeline({ tools: [echo], result: [twice] }).operator()).subscribe((r) => kept.push(r));
    expect(kept.map((r) => [status(r), r.content])).toEqual([
      ['a:ok', 'A'],
      ['b:error:policy_error', 'The output of "echo" was withheld: result middleware "twice" called next() twice (middleware fail closed).'],
    ]);
    expect(kept[1]?.trace).toContainEqual({ stage: 'result', event: 'retry_refused', policy: 'twice' });
  });
});
