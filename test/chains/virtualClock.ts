import { setImmediate as nextTurn } from 'node:timers/promises';
import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';

/**
 * A virtual clock for pipelines whose middleware and bodies await promises: RxJS's TestScheduler
 * flushes its frames synchronously, so promise callbacks (an `await next()`) would only run after the
 * whole test's time had passed. Here `run(promise)` fires the due timers one by one, in time order,
 * and lets every promise callback run between two timers — as on a real clock, without waiting.
 */
export function virtualClock() {
  let now = 0;
  let seq = 0;
  const timers = new Set<{ at: number; seq: number; fire: () => void }>();
  const scheduler: SchedulerLike = {
    now: () => now,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      const timer = { at: now + delay, seq: seq++, fire: () => work.call(subscription as unknown as SchedulerAction<T>, state) };
      const subscription = new Subscription(() => timers.delete(timer));
      timers.add(timer);
      return subscription;
    },
  };
  /** Lets every pending promise callback (and what it schedules in turn) run. */
  const settle = async () => {
    for (let i = 0; i < 20; i++) await nextTurn();
  };
  /** Advances time until `promise` settles: each due timer fires at its time, promise callbacks run between. */
  const run = async <T>(promise: Promise<T>): Promise<T> => {
    let done = false;
    const watched = promise.finally(() => (done = true));
    for (;;) {
      await settle();
      if (done) return watched;
      const due = [...timers].sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) throw new Error(`stuck at ${now}: nothing is scheduled and the run has not ended`);
      timers.delete(due);
      now = Math.max(now, due.at);
      due.fire();
    }
  };
  /** A promise that resolves `ms` from now on this clock, or rejects with `signal`'s reason when it aborts. */
  const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const onAbort = () => {
        timer.unsubscribe();
        reject(signal!.reason as Error);
      };
      const timer = scheduler.schedule(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  return { scheduler, run, sleep, now: () => now };
}
