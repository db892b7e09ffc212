import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { Drain } from './drain.js';
import { subscribeAsChild } from './subscribeAsChild.js';

/**
 * Subscribes to the source at once but holds what it emits until `ready` resolves, then lets it all
 * through, in order, and everything after it. A hot source (a Subject of calls) loses nothing while
 * `ready` is pending; if `ready` rejects, the output errors with its reason and the held values go.
 */
export function holdUntil<T>(ready: Promise<unknown>): MonoTypeOperatorFunction<T> {
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
      subscribeAsChild(subscriber, source, {
        next: (value) => (held === undefined ? subscriber.next(value) : void held.push(value)),
        error: (error: unknown) => drain.error(error),
        complete: () => drain.complete(),
      });
    });
}
