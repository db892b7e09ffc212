import { finalize } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, denyTools, type ToolCall } from '../../src/index.js';
import { answerIn, bodyTaking, statusMarbles, TestingOptionError } from '../../src/testing/index.js';

const call = (id: string, name: string, frames = 0): ToolCall => ({ id, name, args: { frames } });

describe('marble helpers', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  // A body of `frames` frames; `ended` records the frame its Observable was finalised at (done or unsubscribed).
  const ended: number[] = [];
  const slow = defineTool({
    name: 'slow',
    description: 'Takes its frames',
    input: z.object({ frames: z.number() }),
    mode: 'parallel',
    timeoutMs: 5,
    execute: ({ frames }) => bodyTaking(frames, 'done').pipe(finalize(() => ended.push(scheduler.now()))),
  });

  it("statusMarbles: 'id:ok' for an ok result, 'id:status:code' for any other", () => {
    scheduler.run(({ cold, expectObservable }) => {
      const rm = defineTool({ name: 'rm', description: 'Remove', input: z.object({}), mode: 'parallel', execute: () => 'gone' });
      const pipeline = createPipeline({ tools: [slow, rm], pre: [denyTools(['rm'])], scheduler });
      // d's body of 7 frames is cut at slow's timeoutMs, 5 (the group `(abc)` spans frames 0 to 4).
      const calls = cold('(abcd|)', { a: call('a', 'slow'), b: call('b', 'nope'), c: { id: 'c', name: 'rm', args: {} }, d: call('d', 'slow', 7) });
      expectObservable(calls.pipe(pipeline.operator(), statusMarbles())).toBe('(abc)(d|)', {
        a: 'a:ok',
        b: 'b:error:unknown_tool',
        c: 'c:denied:denied',
        d: 'd:error:timeout',
      });
    });
  });

  it('answerIn: emits the value `frames` after the subscription, and completes then', () => {
    scheduler.run(({ expectObservable }) => {
      expectObservable(answerIn(30, 'allowed-once')).toBe('30ms (v|)', { v: 'allowed-once' });
      expectObservable(answerIn(0, { decision: 'deny' })).toBe('(v|)', { v: { decision: 'deny' } });
      expectObservable(answerIn(5, 'late'), '^ 2ms !').toBe('---');
    });
  });

  it('answerIn(0, value) answers at the same frame, but not during subscribe', () => {
    scheduler.run(({ flush }) => {
      const seen: string[] = [];
      answerIn(0, 'now').subscribe((value) => seen.push(value));
      expect(seen).toEqual([]);
      flush();
      expect(seen).toEqual(['now']);
    });
  });

  it('bodyTaking: a body that ends `frames` later with its value as its one item', () => {
    ended.length = 0;
    scheduler.run(({ cold, expectObservable }) => {
      const pipeline = createPipeline({ tools: [slow], scheduler });
      const results = cold('a|', { a: call('a', 'slow', 3) }).pipe(pipeline.operator());
      expectObservable(results).toBe('3ms (r|)', { r: expect.objectContaining({ id: 'a', status: 'ok', streamed: true, value: ['done'] }) });
    });
    expect(ended).toEqual([3]);
  });

  it('bodyTaking: an aborted body is unsubscribed at the frame of the abort', () => {
    ended.length = 0;
    scheduler.run(({ cold, expectObservable }) => {
      const pipeline = createPipeline({ tools: [slow], scheduler });
      // slow's timeoutMs is 5: the body of 10 frames is cut at 5.
      expectObservable(cold('a|', { a: call('a', 'slow', 10) }).pipe(pipeline.operator(), statusMarbles())).toBe('5ms (a|)', { a: 'a:error:timeout' });
    });
    expect(ended).toEqual([5]);
  });

  it.each([-1, Number.NaN, Infinity, '3'])('refuses frames %s, naming the function', (frames) => {
    for (const [helper, where] of [[answerIn, 'answerIn'], [bodyTaking, 'bodyTaking']] as const) {
      expect(() => helper(frames as number, 'x')).toThrow(TestingOptionError);
      expect(() => helper(frames as number, 'x')).toThrow(`${where}: \`frames\` must be a finite number of at least 0`);
    }
  });
});
