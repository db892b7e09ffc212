import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { subscribeAsChild } from './subscribeAsChild.js';

/**
 * Passes each value on once `gate(value)` has settled (at once when it returns nothing), in the order
 * the gates settle; completion, and a source error, wait until every gate has settled — no value is
 * dropped behind them. A gate that rejects errors the output with its reason (after the others).
 */
export function awaitEach<T>(gate: (value: T) => PromiseLike<void> | void): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let pending = 0;
      let ended: { readonly error?: unknown; readonly failed: boolean } | undefined;
      let gateError: { readonly error: unknown } | undefined;
      const closeIfDone = () => {
        if (pending > 0 || ended === undefined || subscriber.closed) return;
        if (gateError !== undefined) subscriber.error(gateError.error);
        else if (ended.failed) subscriber.error(ended.error);
        else subscriber.complete();
      };
      subscribeAsChild(subscriber, source, {
        next(value) {
          let waiting: PromiseLike<void> | void;
          try {
            waiting = gate(value);
          } catch (error) {
            gateError ??= { error };
            return;
          }
          if (waiting === undefined) return subscriber.next(value);
          pending++;
          waiting.then(
            () => {
              pending--;
              if (gateError === undefined) subscriber.next(value);
              closeIfDone();
            },
            (error: unknown) => {
              pending--;
              gateError ??= { error };
              closeIfDone();
            },
          );
        },
        error(error: unknown) {
          ended = { error, failed: true };
          closeIfDone();
        },
        complete() {
          ended = { failed: false };
          closeIfDone();
        },
      });
    });
}
