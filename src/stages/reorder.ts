import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { subscribeAsChild } from '../internal/subscribeAsChild.js';

/**
 * Emits items in `index` order (0, 1, 2, …), each as soon as every earlier one is out.
 *
 * An item whose turn has come passes straight through; one that arrives early waits in a buffer keyed
 * by index until the gap before it closes. On completion nothing may still wait: a gap means an index
 * never arrived, which is a broken invariant of the pipeline and errors the stream.
 *
 * ```
 * input:  --2--0--1--3--|
 * output: -----0--(12)3-|
 * ```
 *
 * State lives per subscription. A custom operator because no built-in one releases a keyed buffer in
 * order; it holds at most the items that are ahead of the slowest one.
 *
 * @example
 * ```ts
 * of({ index: 1 }, { index: 0 }).pipe(reorderByIndex()).subscribe(console.log); // index 0, then 1
 * ```
 */
export function reorderByIndex<T extends { readonly index: number }>(): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      /** The index whose turn it is. */
      let nextIndex = 0;
      /** Items that arrived before their turn. */
      const early = new Map<number, T>();
      /** Releasing items: a consumer may make the source complete (or error) from inside `next`. */
      let releasing = false;
      /** What the source ended with while items were being released; acted on once they are out. */
      let ended: { readonly error: unknown } | 'complete' | undefined;
      const end = () => {
        if (ended === undefined || releasing) return;
        if (ended !== 'complete') subscriber.error(ended.error);
        else if (early.size > 0) {
          const missing = nextIndex;
          subscriber.error(new Error(`reorderByIndex: index ${missing} never arrived; ${early.size} item(s) held back`));
        } else subscriber.complete();
      };
      subscribeAsChild(subscriber, source, {
        next(item) {
          if (item.index !== nextIndex) {
            early.set(item.index, item);
            return;
          }
          releasing = true;
          try {
            nextIndex++;
            subscriber.next(item);
            for (let waiting = early.get(nextIndex); waiting !== undefined; waiting = early.get(nextIndex)) {
              early.delete(nextIndex);
              nextIndex++;
              subscriber.next(waiting);
            }
          } finally {
            releasing = false;
          }
          end();
        },
        error(error: unknown) {
          ended = { error };
          end();
        },
        complete() {
          ended = 'complete';
          end();
        },
      });
    });
}
