import { Observable } from 'rxjs';

/**
 * An Observable over an async iterable that pulls the next item only while fewer than `limit` pulled
 * items are unanswered (`answered()` tells it when one is): backpressure for `run()`, so a source that
 * is faster than the tools (or waits behind one slow call) is not drained into memory. `from()` would
 * pull as fast as the iterable yields. Unsubscribing stops pulling and calls the iterator's `return()`.
 * Not for a source whose calls may wait for its end (`start: 'after-response'`), as below.
 */
export function pullCalls<T>(iterable: AsyncIterable<T>, limit: number): { readonly calls: Observable<T>; answered(): void } {
  let unanswered = 0;
  let wake: (() => void) | undefined;
  const answered = () => {
    unanswered--;
    if (wake !== undefined && unanswered < limit) {
      const resume = wake;
      wake = undefined;
      resume();
    }
  };
  const calls = new Observable<T>((subscriber) => {
    const iterator = iterable[Symbol.asyncIterator]();
    let stopped = false;
    void (async () => {
      try {
        for (;;) {
          while (unanswered >= limit && !stopped) await new Promise<void>((resolve) => (wake = resolve));
          if (stopped) return;
          const step = await iterator.next();
          if (stopped) return;
          if (step.done) break;
          unanswered++;
          subscriber.next(step.value);
        }
        subscriber.complete();
      } catch (error) {
        subscriber.error(error);
      }
    })();
    return () => {
      stopped = true;
      wake?.();
      void Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => undefined);
    };
  });
  return { calls, answered };
}

/**
 * Whether a sync iterable is a collection (an array, a Set: finite, given at once), not an iterator
 * (a generator: lazy, and it may be endless). An aborted run still answers every call of a collection,
 * so it reads one to its end; an iterator, like a stream, is read no further.
 */
export function isCollection(iterable: Iterable<unknown>): boolean {
  return typeof (iterable as Partial<Iterator<unknown>>).next !== 'function';
}

/**
 * The same backpressure over a synchronous iterable (an array, a generator): the next item is taken
 * only while fewer than `limit` taken items are unanswered, synchronously, as answers come in. `from()`
 * would push every item at once, so a 100k-call array would sit in the pool's queue as 100k live
 * records (their args snapshots too) instead of about `limit`: the memory a batch holds stays bounded.
 * (Its time is about the same either way once the code is warm: bench/overhead.)
 * Once `signal` aborted an iterator (a generator) is taken no further, while a collection is read to
 * its end (see `isCollection`): the pool answers each call arriving after the abort at once, so the
 * rest of an array is taken in at once, `cancelled` — and an endless generator would be taken in for
 * ever, inside the abort: the caller's own stop (`stopWhenAborted`) would come too late.
 * The iterator is returned (a generator's `finally` runs) when the subscription ends before it is done;
 * an iterator that throws errors the Observable.
 *
 * Not for a source whose calls may wait for its end (`start: 'after-response'`): those hold their
 * answers until the source completes, which pulling would hold back behind them.
 */
export function pullIterableCalls<T>(iterable: Iterable<T>, limit: number, signal: AbortSignal | undefined): { readonly calls: Observable<T>; answered(): void } {
  let unanswered = 0;
  let pull: (() => void) | undefined;
  const answered = () => {
    unanswered--;
    pull?.();
  };
  const stopAt = isCollection(iterable) ? undefined : signal;
  const calls = new Observable<T>((subscriber) => {
    const iterator = iterable[Symbol.iterator]();
    let done = false;
    /** The loop is on the stack: an answer given inside `next` only lowers the count it reads. */
    let pulling = false;
    pull = () => {
      if (pulling) return;
      pulling = true;
      try {
        while (!done && unanswered < limit && !subscriber.closed && stopAt?.aborted !== true) {
          let step: IteratorResult<T>;
          try {
            step = iterator.next();
          } catch (error) {
            done = true;
            return subscriber.error(error);
          }
          if (step.done === true) {
            done = true;
            return subscriber.complete();
          }
          unanswered++;
          subscriber.next(step.value);
        }
      } finally {
        pulling = false;
      }
    };
    pull();
    return () => {
      pull = undefined;
      if (done) return;
      done = true;
      try {
        iterator.return?.();
      } catch {
        // the iterator's own cleanup failed: nothing is left to tell
      }
    };
  });
  return { calls, answered };
}
