import { identity, Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { isThenable, type MaybeLater } from '../util/later.js';
import { Drain } from './drain.js';
import { subscribeAsChild } from './subscribeAsChild.js';

/**
 * Subscribes to the source at once but holds what it emits until `ready` resolves, then lets it all
 * through, in order, and everything after it. A hot source (a Subject of calls) loses nothing while
 * `ready` is pending; if `ready` rejects, the output errors with its reason and the held values go.
 *
 * `ready` that is not a thenable (a plain value: ready now) holds nothing — the source passes straight
 * through; a `Later` that has settled lets through (or errors) at once, before the source is subscribed.
 *
 * @example
 * ```ts
 * calls.pipe(holdUntil(lease.acquire())); // calls that arrive while the lease is taken wait, none is lost
 * ```
 */
export function holdUntil<T>(ready: MaybeLater<unknown> | PromiseLike<unknown>): MonoTypeOperatorFunction<T> {
  if (!isThenable(ready)) return identity;
  return (source) =>
    new Observable<T>((subscriber) => {
      let held: T[] | undefined = [];
      // The hold is the one piece of work in flight: the source's end waits until it is released.
      const drain = new Drain(subscriber);
      drain.add();
      ready.then(
        () => {
          const values = held ?? [];
          held = undefined;
          for (const value of values) {
            if (subscriber.closed) return;
            subscriber.next(value);
          }
          drain.settle();
          drain.closeIfDone();
        },
        (error: unknown) => {
          // Not through the drain: a failed `ready` ends the output at once, without waiting for the source.
          held = undefined;
          subscriber.error(error);
        },
      );
      if (subscriber.closed) return; // a settled `ready` that rejected: the source is never subscribed
      subscribeAsChild(subscriber, source, {
        next: (value) => (held === undefined ? subscriber.next(value) : void held.push(value)),
        error: (error: unknown) => drain.error(error),
        complete: () => drain.complete(),
      });
    });
}
