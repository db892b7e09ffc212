import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
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
      let end: { readonly failed: boolean; readonly error?: unknown } | undefined;
      const finish = () => {
        if (end === undefined) return;
        if (end.failed) subscriber.error(end.error);
        else subscriber.complete();
      };
      ready.then(
        () => {
          const values = held ?? [];
          held = undefined;
          for (const value of values) {
            if (subscriber.closed) return;
            subscriber.next(value);
          }
          finish();
        },
        (error: unknown) => {
          held = undefined;
          subscriber.error(error);
        },
      );
      subscribeAsChild(subscriber, source, {
        next: (value) => (held === undefined ? subscriber.next(value) : void held.push(value)),
        error: (error: unknown) => {
          end = { failed: true, error };
          if (held === undefined) finish();
        },
        complete: () => {
          end = { failed: false };
          if (held === undefined) finish();
        },
      });
    });
}
