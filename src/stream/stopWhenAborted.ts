import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { subscribeAsChild } from './subscribeAsChild.js';

/**
 * Completes when `signal` aborts (at once if it already has), unsubscribing the source: no further
 * call is taken in, while those already taken in go on downstream to get their results.
 */
export function stopWhenAborted<T>(signal: AbortSignal | undefined): MonoTypeOperatorFunction<T> {
  if (signal === undefined) return (source) => source;
  return (source) =>
    new Observable<T>((subscriber) => {
      if (signal.aborted) return subscriber.complete();
      const onAbort = () => subscriber.complete();
      signal.addEventListener('abort', onAbort, { once: true });
      subscriber.add(() => signal.removeEventListener('abort', onAbort));
      subscribeAsChild(subscriber, source, {
        next: (value) => subscriber.next(value),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}
