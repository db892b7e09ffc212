import { isObservable, type Observable } from 'rxjs';

/** What the adapter does with each part of its source, and with the source's end. */
export interface PartHandlers<T> {
  next(part: T): void;
  complete(): void;
  error(error: unknown): void;
}

/**
 * Reads an Observable, a `ReadableStream` or an async iterable part by part into `handlers` and
 * returns the teardown, which stops reading at once. Internal: not exported from the package.
 *
 * A `ReadableStream` (the AI SDK's `fullStream` is one) is read through a reader, because its async
 * iterator's `return()` waits for a pending read to settle: while the model is silent, unsubscribing
 * would not stop anything. `reader.cancel()` ends a pending read at once and cancels this branch of the
 * stream. Any other async iterable is pulled with `next()` and stopped with `return()`. A part that
 * arrives after the teardown is dropped.
 */
export function readParts<T>(
  source: AsyncIterable<T> | ReadableStream<T> | Observable<T>,
  handlers: PartHandlers<T>,
): () => void {
  let stopped = false;
  if (isObservable(source)) {
    const subscription = source.subscribe({
      next: (part) => !stopped && handlers.next(part),
      error: (error: unknown) => !stopped && handlers.error(error),
      complete: () => !stopped && handlers.complete(),
    });
    return () => {
      stopped = true;
      subscription.unsubscribe();
    };
  }

  let pull: () => Promise<IteratorResult<T>>;
  let stop: () => unknown;
  try {
    if (isReadableStream<T>(source)) {
      const reader = source.getReader();
      pull = () => reader.read() as Promise<IteratorResult<T>>;
      stop = () => reader.cancel();
    } else {
      const iterator = source[Symbol.asyncIterator]();
      pull = () => iterator.next();
      stop = () => iterator.return?.();
    }
  } catch (error) {
    // A locked stream, or an iterable that throws: the source has failed before it started.
    handlers.error(error);
    return () => undefined;
  }

  let finished = false;
  void (async () => {
    try {
      for (;;) {
        const step = await pull();
        if (stopped) return;
        if (step.done === true) {
          finished = true;
          handlers.complete();
          return;
        }
        handlers.next(step.value);
        if (stopped) return;
      }
    } catch (error) {
      finished = true;
      if (!stopped) handlers.error(error);
    }
  })();

  return () => {
    if (stopped) return;
    stopped = true;
    if (finished) return;
    // Deferred, so a `cancel()` / `return()` that throws or re-enters cannot disturb the unsubscriber.
    void Promise.resolve()
      .then(stop)
      .catch(() => undefined);
  };
}

/** Duck-typed, so a stream from another realm or a polyfill is read through its reader too. */
function isReadableStream<T>(source: AsyncIterable<T> | ReadableStream<T>): source is ReadableStream<T> {
  return typeof (source as Partial<ReadableStream<T>>).getReader === 'function';
}
