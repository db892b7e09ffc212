import { catchError, map, throwError, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, SourceError, type PipelineOptions, type ToolCall } from '../../src/index.js';

// Bodies are virtual-time Observables: `frames` frames long, emitting the call's key.
// `starts` records when each body started, in virtual frames.
let starts: [string, number][] = [];
let now = () => 0;
const input = z.object({ key: z.string(), frames: z.number() });
const sleeper = (name: string, mode: 'parallel' | 'exclusive', extra: { timeoutMs?: number } = {}) =>
  defineTool({
    name,
    description: name,
    input,
    mode,
    ...extra,
    execute: ({ key, frames }) => {
      starts.push([key, now()]);
      return timer(frames).pipe(map(() => key));
    },
  });
const par = sleeper('par', 'parallel');
const ex = sleeper('ex', 'exclusive');
const slow = sleeper('slow', 'parallel', { timeoutMs: 3 });
const slowEx = sleeper('slowEx', 'exclusive', { timeoutMs: 3 });

const call = (key: string, name: string, frames: number): ToolCall => ({ id: key, name, args: { key, frames } });

describe('execute stage scheduling (virtual time)', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    starts = [];
    now = () => scheduler.now();
  });

  const ids = (options: Partial<PipelineOptions> = {}) => {
    const pipeline = createPipeline({ tools: [par, ex, slow, slowEx], ...options });
    return (calls: import('rxjs').Observable<ToolCall>) => calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}`));
  };

  it('runs parallel calls concurrently up to the limit, and starts the next as a slot frees', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abcd|)', { a: call('a', 'par', 2), b: call('b', 'par', 3), c: call('c', 'par', 2), d: call('d', 'par', 3) });
      // a 0–2, b 0–3, c 2–4, d 3–6
      expectObservable(calls.pipe(ids({ concurrency: 2 }))).toBe('--abc-(d|)', { a: 'a:ok', b: 'b:ok', c: 'c:ok', d: 'd:ok' });
    });
  });

  it('an exclusive call waits for every earlier call and blocks every later one', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abxd|)', { a: call('a', 'par', 2), b: call('b', 'par', 4), x: call('x', 'ex', 3), d: call('d', 'par', 2) });
      // a 0–2, b 0–4, x 4–7, d 7–9
      expectObservable(calls.pipe(ids())).toBe('--a-b--x-(d|)', { a: 'a:ok', b: 'b:ok', x: 'x:ok', d: 'd:ok' });
    });
    expect(starts).toEqual([['a', 0], ['b', 0], ['x', 4], ['d', 7]]);
  });

  it('a call arriving while earlier ones run starts at once, without waiting for the source to complete', () => {
    scheduler.run(({ hot, expectObservable }) => {
      // b arrives at 2 while a runs (0–6) and ends at 3, but waits in the reorder buffer for a.
      const calls = hot('a-b-------|', { a: call('a', 'par', 6), b: call('b', 'par', 1) });
      expectObservable(calls.pipe(ids())).toBe('------(ab)|', { a: 'a:ok', b: 'b:ok' });
    });
    expect(starts).toEqual([['a', 0], ['b', 2]]);
  });

  it('an exclusive call arriving while a parallel one runs starts when it ends', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const calls = hot('a-x-|', { a: call('a', 'par', 4), x: call('x', 'ex', 2) });
      expectObservable(calls.pipe(ids())).toBe('----a-(x|)', { a: 'a:ok', x: 'x:ok' });
    });
  });

  it("a timeout fails the call at its limit; a parallel call's failure cancels nothing by default", () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: call('a', 'slow', 10), b: call('b', 'par', 5), c: call('c', 'ex', 1) });
      expectObservable(calls.pipe(ids())).toBe('---a-b(c|)', { a: 'a:error', b: 'b:ok', c: 'c:ok' });
    });
  });

  it("an exclusive call's failure cancels the rest of its turn by default", () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: call('a', 'slowEx', 10), b: call('b', 'par', 5), c: call('c', 'ex', 1) });
      expectObservable(calls.pipe(ids())).toBe('---(abc|)', { a: 'a:error', b: 'b:cancelled', c: 'c:cancelled' });
    });
  });

  it("with onError 'cancel-rest' any failure cancels the rest of its turn", () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: call('a', 'slow', 10), b: call('b', 'par', 5), c: call('c', 'ex', 1) });
      expectObservable(calls.pipe(ids({ onError: 'cancel-rest' }))).toBe('---(abc|)', { a: 'a:error', b: 'b:cancelled', c: 'c:cancelled' });
    });
  });

  it('cancel-rest reaches only the failing call\'s turn: another turn in the same subscription goes on', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: { ...call('a', 'slow', 10), turn: 't1' }, b: { ...call('b', 'par', 5), turn: 't1' }, c: { ...call('c', 'par', 8), turn: 't2' } });
      expectObservable(calls.pipe(ids({ onError: 'cancel-rest' }))).toBe('---(ab)-(c|)', { a: 'a:error', b: 'b:cancelled', c: 'c:ok' });
    });
  });

  it("with onError 'continue' the others go on", () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: call('a', 'slow', 10), b: call('b', 'par', 5), c: call('c', 'ex', 1) });
      // a times out at 3 (an Observable body stops at once on abort), b ends at 5, c runs 5–6
      expectObservable(calls.pipe(ids({ onError: 'continue' }))).toBe('---a-b(c|)', { a: 'a:error', b: 'b:ok', c: 'c:ok' });
    });
  });

  it('a source error is forwarded after every received call has its result, as a SourceError counting them', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('a-#', { a: call('a', 'par', 4) });
      const failure = catchError((error: unknown) => throwError(() => (error instanceof SourceError ? `SourceError(${error.answered}): ${String(error.cause)}` : error)));
      expectObservable(calls.pipe(ids(), failure)).toBe('----(a#)', { a: 'a:ok' }, 'SourceError(1): error');
    });
  });

  it('unsubscribing stops the source and the running bodies', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const calls = cold('a-b-c|', { a: call('a', 'par', 2), b: call('b', 'par', 9), c: call('c', 'par', 1) });
      expectObservable(calls.pipe(ids()), '^--!').toBe('--a', { a: 'a:ok' });
      expectSubscriptions(calls.subscriptions).toBe('^--!');
    });
  });

  it('empty completes at once; never never completes', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold<ToolCall>('|').pipe(ids())).toBe('|');
      expectObservable(cold<ToolCall>('-').pipe(ids())).toBe('-');
    });
  });
});
