import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { Drain } from './drain.js';
import { subscribeAsChild } from './subscribeAsChild.js';

/**
 * Passes each value on once `gate(value)` has settled (at once when it returns nothing), in the order
 * the gates settle; completion, and a source error, wait until every gate has settled — no value is
 * dropped behind them. A gate that rejects errors the output with its reason (after the others).
 */
export function awaitEach<T>(gate: (value: T) => PromiseLike<void> | void): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      // A gate's failure is the drain's own failure: it wins over the source's end but, like it,
      // waits for the source to end and the other gates to settle.
      const drain = new Drain(subscriber);
      subscribeAsChild(subscriber, source, {
        next(value) {
          let waiting: PromiseLike<void> | void;
          try {
            waiting = gate(value);
          } catch (error) {
            drain.fail(error);
            return;
          }
          if (waiting === undefined) return subscriber.next(value);
          drain.add();
          waiting.then(
            () => {
              drain.settle();
              if (!drain.failed) subscriber.next(value);
              drain.closeIfDone();
            },
            (error: unknown) => {
              drain.settle();
              drain.fail(error);
              drain.closeIfDone();
            },
          );
        },
        error: (error: unknown) => drain.error(error),
        complete: () => drain.complete(),
      });
    });
}
