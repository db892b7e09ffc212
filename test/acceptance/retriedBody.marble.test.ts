/**
 * Issue 26's acceptance: "a retried body", as a marble test. A body that fails at frame 3, is tried
 * again after a backoff of 10 frames, and answers 2 frames into its second attempt, under an execute
 * middleware that pipes RxJS operators into `next()`: every frame is exact, and no real time passes.
 */
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ExecuteMiddleware, type ToolCall, type ToolResult } from '../../src/index.js';

it('a retried body: attempt 1 fails at 3, the backoff ends at 13, the result comes at 15', () => {
  const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  const bodies: number[] = [];
  const middlewareCalls: [number, number][] = [];
  const results: ToolResult[] = [];
  scheduler.run(({ cold, expectObservable }) => {
    const fetch = defineTool({
      name: 'fetch',
      description: 'fetch',
      input: z.object({}),
      mode: 'parallel',
      idempotent: true,
      retry: { attempts: 2, backoff: { initialMs: 10, jitter: 0 } },
      execute: () => {
        bodies.push(scheduler.now());
        return bodies.length === 1 ? cold<string>('---#', {}, new Error('flaky')) : cold('--(v|)', { v: 'value' });
      },
    });
    const mapped: ExecuteMiddleware = (ctx, next) => {
      middlewareCalls.push([ctx.attempt, scheduler.now()]);
      return next().pipe(map((v) => v));
    };
    const pipeline = createPipeline({ tools: [fetch], execute: [mapped], scheduler });
    const calls = cold<ToolCall>('(a|)', { a: { id: 'a', name: 'fetch', args: {} } });
    expectObservable(calls.pipe(pipeline.operator(), map((r) => (results.push(r), r.status)))).toBe('15ms (a|)', { a: 'ok' });
  });
  expect(bodies).toEqual([0, 13]);
  expect(middlewareCalls).toEqual([
    [1, 0],
    [2, 13],
  ]);
  const [result] = results;
  expect(result).toMatchObject({ status: 'ok', value: ['value'], streamed: true, attempts: 2 });
  expect(result!.trace).toEqual([
    { stage: 'execute', event: 'attempt_failed', attempt: 1, delayMs: 10, error: expect.objectContaining({ code: 'tool_error', message: 'Tool "fetch" failed: flaky' }) },
  ]);
});
