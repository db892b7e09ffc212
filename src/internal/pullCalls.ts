import { Observable } from 'rxjs';

/**
 * An Observable over an async iterable that pulls the next item only while fewer than `limit` pulled
 * items are unanswered (`answered()` tells it when one is): backpressure for `run()`, so a source that
 * is faster than the tools (or waits behind one slow call) is not drained into memory. `from()` would
 * pull as fast as the iterable yields. Unsubscribing stops pulling and calls the iterator's `return()`.
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
