import { asyncScheduler, Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';

/**
 * The virtual-time scheduler of `TestScheduler.run` (within it, `asyncScheduler` is virtual), counting
 * the timers still armed: a test can check that nothing is left scheduled.
 */
export function countedTimers(): SchedulerLike & { readonly active: () => number } {
  let active = 0;
  return {
    now: () => asyncScheduler.now(),
    active: () => active,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      let live = true;
      active++;
      const end = () => {
        if (live) active--;
        live = false;
      };
      const inner = asyncScheduler.schedule(function (this: SchedulerAction<T>, s?: T) {
        end();
        work.call(this, s);
      }, delay, state);
      inner.add(end);
      return inner;
    },
  };
}
