import { Observable, type MonoTypeOperatorFunction, type Subscriber } from 'rxjs';
import { subscribeAsChild } from '../../stream/subscribeAsChild.js';
import { Drain } from '../../stream/drain.js';
import { ReorderWindow } from '../../stream/reorderWindow.js';

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
  return (source) => new Observable<T>((subscriber) => inOrder(source, subscriber, new ReorderWindow<T>()));
}

/**
 * The reorder stage of a run whose pool shares its window (`ReorderWindow`): the same buffer, and the
 * pool's `maxPending` answered from it. For one subscription (the window is its state).
 *
 * @example
 * ```ts
 * defer(() => {
 *   const window = new ReorderWindow<ToolResult>(settings.maxPending);
 *   return calls.pipe(runStages(settings, signal, hooks, undefined, window), reorderIn(window));
 * });
 * ```
 */
export function reorderIn<T extends { readonly index: number }>(window: ReorderWindow<T>): MonoTypeOperatorFunction<T> {
  return (source) => new Observable<T>((subscriber) => inOrder(source, subscriber, window));
}

function inOrder<T extends { readonly index: number }>(source: Observable<T>, subscriber: Subscriber<T>, window: ReorderWindow<T>): void {
  // In flight: a release loop, since a consumer may make the source end from inside `next`. At a clean
  // end nothing may still wait: a gap is an index that never arrived.
  const drain = new Drain(subscriber, () => {
    const gap = window.gap();
    return gap === undefined ? undefined : new Error(`reorderByIndex: index ${gap.missing} never arrived; ${gap.kept} item(s) held back`);
  });
  subscribeAsChild(subscriber, source, {
    next(item) {
      let out = window.take(item);
      if (out === undefined) return window.arrived();
      drain.add();
      try {
        for (; out !== undefined; out = window.following()) subscriber.next(out);
      } finally {
        drain.settle();
      }
      window.arrived(); // after the release loop: a call the pool starts now may finish at once and arrive here
      drain.closeIfDone();
    },
    error: (error: unknown) => drain.error(error),
    complete: () => drain.complete(),
  });
}
