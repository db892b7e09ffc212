import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { subscribeAsChild } from '../../stream/subscribeAsChild.js';
import { Drain } from '../../stream/drain.js';

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
      // In flight: a release loop, since a consumer may make the source end from inside `next`. At a
      // clean end nothing may still wait: a gap is an index that never arrived.
      const drain = new Drain(subscriber, () =>
        early.size > 0 ? new Error(`reorderByIndex: index ${nextIndex} never arrived; ${early.size} item(s) held back`) : undefined,
      );
      subscribeAsChild(subscriber, source, {
        next(item) {
          if (item.index !== nextIndex) {
            early.set(item.index, item);
            return;
          }
          drain.add();
          try {
            nextIndex++;
            subscriber.next(item);
            for (let waiting = early.get(nextIndex); waiting !== undefined; waiting = early.get(nextIndex)) {
              early.delete(nextIndex);
              nextIndex++;
              subscriber.next(waiting);
            }
          } finally {
            drain.settle();
          }
          drain.closeIfDone();
        },
        error: (error: unknown) => drain.error(error),
        complete: () => drain.complete(),
      });
    });
}
