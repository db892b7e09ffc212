import { asyncScheduler, type SchedulerLike } from 'rxjs';

/** The wall clock the pipeline reads when it runs in real time: sub-millisecond and monotonic. */
export const wallNow = (): number => performance.now();

/**
 * Whether `scheduler` runs in real time: RxJS's own real-time schedulers (async, asap, queue,
 * animationFrame) share `asyncScheduler`'s `now`; a `TestScheduler` or a `VirtualTimeScheduler` has
 * its own. A real-time scheduler from a second copy of RxJS counts as virtual (its `now` is another
 * function): its pipelines then keep their own rate buckets.
 */
export function isWallClock(scheduler: SchedulerLike | undefined): boolean {
  return scheduler === undefined || scheduler.now === asyncScheduler.now;
}

/**
 * The clock a pipeline on `scheduler` reads its times from: {@link wallNow} in real time (keeping its
 * precision), else the scheduler's own `now()`, so that on a virtual scheduler every `timing` figure
 * and event time is a frame.
 */
export function clockOf(scheduler: SchedulerLike | undefined): () => number {
  return isWallClock(scheduler) ? wallNow : () => scheduler!.now();
}
