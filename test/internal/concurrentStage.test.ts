import { timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { CallRecord } from '../../src/engine/records/callRecord.js';
import { concurrentStage } from '../../src/engine/chains/concurrentStage.js';
import type { AnyTool } from '../../src/index.js';

// Records named by letter: upper case is exclusive (a barrier), lower case parallel. The work of each
// takes `delays[letter]` virtual frames (0 = synchronous).
const record = (letter: string, index: number): CallRecord => {
  const r = new CallRecord(index, letter, letter, {}, 0);
  r.tool = { mode: letter === letter.toUpperCase() ? 'exclusive' : 'parallel' } as AnyTool;
  return r;
};
const isBarrier = (r: CallRecord) => r.tool!.mode === 'exclusive';
/** Work that is done after `frames` virtual frames. */
const after = (frames: number) => ({ then: (done: () => void) => void timer(frames).subscribe(() => done()) }) as unknown as PromiseLike<void>;

describe('concurrentStage (barrier-preserving concurrent work)', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  const stage = (delays: Record<string, number>) =>
    concurrentStage(
      (r) => {
        const frames = delays[r.id] ?? 0;
        return frames === 0 ? undefined : after(frames);
      },
      isBarrier,
      undefined,
    );
  const records = (marble: string, cold: (m: string, v: Record<string, CallRecord>) => Observable<CallRecord>) => {
    const values: Record<string, CallRecord> = {};
    let i = 0;
    for (const ch of marble) if (/[a-z]/i.test(ch)) values[ch] = record(ch, i++);
    return { source: cold(marble, values), values };
  };

  it('parallel records pass one another: each leaves when its work is done', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const { source, values } = records('(ab|)', cold);
      expectObservable(source.pipe(stage({ a: 5, b: 2 }))).toBe('--b--(a|)', values);
    });
  });

  it('a barrier waits for every earlier record; later records wait for the barrier', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const { source, values } = records('(aXb|)', cold);
      // X is decided at once but must not overtake a (5); b (1) must not overtake X
      expectObservable(source.pipe(stage({ a: 5, b: 1 }))).toBe('-----(aXb|)', values);
    });
  });

  it('a slow barrier holds back the records after it, not those before it', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const { source, values } = records('(aXbc|)', cold);
      // behind the barrier, parallel records keep their completion order: c (sync) before b (2)
      expectObservable(source.pipe(stage({ a: 1, X: 4, b: 2 }))).toBe('-a--(Xcb|)', values);
    });
  });

  it('consecutive barriers keep their order', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const { source, values } = records('(XYZ|)', cold);
      expectObservable(source.pipe(stage({ X: 3, Y: 1, Z: 2 }))).toBe('---(XYZ|)', values);
    });
  });

  it('records arriving over time join the open segment', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const { source, values } = records('a-X----b-|', cold);
      expectObservable(source.pipe(stage({ a: 3, X: 0, b: 0 }))).toBe('---(aX)b-|', values);
    });
  });

  it('completion and a source error wait for the work in flight', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const { source, values } = records('a#', cold);
      expectObservable(source.pipe(stage({ a: 3 }))).toBe('---(a#)', values);
    });
  });

  it('unsubscribing aborts the work signal and drops later results', () => {
    let signal: AbortSignal | undefined;
    scheduler.run(({ cold, expectObservable }) => {
      const values = { a: record('a', 0) };
      const source = cold('a|', values);
      const op = concurrentStage(
        (_r, scope) => {
          signal = scope.signal;
          return after(5);
        },
        isBarrier,
        undefined,
      );
      expectObservable(source.pipe(op), '^--!').toBe('---');
    });
    expect(signal?.aborted).toBe(true);
  });
});
