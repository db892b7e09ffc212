import { Observable, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { subscribeAsChild } from '../../src/stream/subscribeAsChild.js';
import { Drain, type DrainTarget } from '../../src/stream/drain.js';

/**
 * An operator built on a Drain, as the real ones are: each value is "worked on" for `value` frames
 * (0 = synchronously) and emitted when its work settles; a value of `fail` fails the operator on its
 * own (the value is dropped), as awaitEach does when a gate rejects.
 */
function delayEach(scheduler: SchedulerLike, verify?: () => Error | undefined): MonoTypeOperatorFunction<number | 'fail'> {
  return (source) =>
    new Observable((subscriber) => {
      const drain = new Drain(subscriber, verify);
      subscribeAsChild(subscriber, source, {
        next(value) {
          drain.add();
          const settle = () => {
            drain.settle();
            if (value === 'fail') drain.fail(new Error('own failure'));
            else subscriber.next(value);
            drain.closeIfDone();
          };
          if (value === 0) settle();
          else subscriber.add(scheduler.schedule(settle, value === 'fail' ? 1 : value));
        },
        error: (error: unknown) => drain.error(error),
        complete: () => drain.complete(),
      });
    });
}

const values = { a: 3, b: 1, z: 0, f: 'fail' as const };
const out = { a: 3, b: 1, z: 0 };

describe('Drain', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  it('completes only when the source has completed and the last work is out', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('ab|', values);
      expectObservable(source.pipe(delayEach(scheduler))).toBe('--b(a|)', out);
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('completes with the source when nothing is in flight', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('z-z|', values).pipe(delayEach(scheduler))).toBe('z-z|', out);
      expectObservable(cold('|', values).pipe(delayEach(scheduler))).toBe('|');
      expectObservable(cold('-', values).pipe(delayEach(scheduler))).toBe('-');
      expectObservable(cold('a', values).pipe(delayEach(scheduler))).toBe('---a', out);
    });
  });

  it('holds a source error until the work in flight is out, then errors with it', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('ab#', values).pipe(delayEach(scheduler))).toBe('--b(a#)', out);
      expectObservable(cold('z#', values).pipe(delayEach(scheduler))).toBe('z#', out);
    });
  });

  it('an own failure waits for the source and the work in flight, and wins over the source error', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('fa---|', values).pipe(delayEach(scheduler))).toBe('----a#', out, new Error('own failure'));
      expectObservable(cold('fa#', values).pipe(delayEach(scheduler))).toBe('----(a#)', out, new Error('own failure'));
    });
  });

  it('verify turns a clean completion into its error, and is not asked when the source errored', () => {
    const broken = new Error('held back');
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('b|', values).pipe(delayEach(scheduler, () => broken))).toBe('-(b#)', out, broken);
      expectObservable(cold('b#', values).pipe(delayEach(scheduler, () => broken))).toBe('-(b#)', out, 'error');
      expectObservable(cold('b|', values).pipe(delayEach(scheduler, () => undefined))).toBe('-(b|)', out);
    });
  });

  it('an unsubscribe stops the work and the end', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('ab|', values);
      expectObservable(source.pipe(delayEach(scheduler)), '^-!').toBe('-', out); // b's work, due at 2, was cancelled
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('ends the target once, and never one already closed', () => {
    const calls: string[] = [];
    const target: DrainTarget & { closed: boolean } = {
      closed: false,
      error: (error) => calls.push(`error ${String(error)}`),
      complete: () => calls.push('complete'),
    };
    const drain = new Drain(target);
    drain.add();
    drain.complete();
    expect([drain.ended, drain.idle, calls]).toEqual([true, false, []]);
    drain.settle();
    drain.closeIfDone();
    drain.closeIfDone();
    drain.close();
    expect(calls).toEqual(['complete']);

    const closedTarget = { ...target, closed: true };
    calls.length = 0;
    new Drain(closedTarget).error('x');
    expect(calls).toEqual([]);
  });

  it('end() only records the end: the owner closes when it decides', () => {
    const calls: string[] = [];
    const drain = new Drain({ closed: false, error: (e) => calls.push(`error ${String(e)}`), complete: () => calls.push('complete') });
    drain.end({ error: 'boom' });
    expect([drain.ended, drain.sourceFailed, drain.idle, drain.failed, calls]).toEqual([true, true, true, false, []]);
    drain.close();
    expect(calls).toEqual(['error boom']);
  });

  it('an error that is undefined is still an error', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('#', values, undefined).pipe(delayEach(scheduler))).toBe('#', undefined, undefined);
    });
  });
});
