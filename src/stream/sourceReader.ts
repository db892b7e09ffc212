import { isObservable, type Observable, type Subscription } from 'rxjs';

/** A stream adapter's source: what it reads item by item. */
export type Source<T> = AsyncIterable<T> | ReadableStream<T> | Observable<T>;

/** What a stream adapter does with each item of its source, and with its end. */
export interface SourceHandlers<T> {
  next(item: T): void;
  complete(): void;
  error(error: unknown): void;
}

export interface SourceReaderOptions {
  /**
   * Call `return()` / `cancel()` within `stop()` itself instead of a microtask later (see "When the
   * source is told to stop" below). Default `false`.
   */
  readonly stopSynchronously?: boolean;
}

/**
 * Reads an Observable, a `ReadableStream` or an async iterable item by item into `handlers`, with a
 * clean teardown. Shared by the stream adapters. Internal: not exported from the package.
 *
 * **How each kind is read.**
 * - An Observable is subscribed. A synchronous source may stop or detach the reader from a handler
 *   while it is still being subscribed (before `subscribe()` has returned the subscription): the
 *   subscription is then unsubscribed as soon as it is returned.
 * - A `ReadableStream` (the AI SDK's `fullStream` is one) is read through a reader, because its async
 *   iterator's `return()` waits for a pending read to settle: while the model is silent, unsubscribing
 *   would not stop anything. `reader.cancel()` ends a pending read at once and cancels this branch of
 *   the stream. It is recognised duck-typed (a `getReader` method), so a stream from another realm or a
 *   polyfill is read through its reader too.
 * - Any other async iterable is pulled with `next()` and stopped with `return()`.
 * - A source that fails before it started — a locked stream (`getReader()` throws), an iterable whose
 *   `[Symbol.asyncIterator]()` throws — is delivered as `handlers.error`.
 * - Nothing in the read loop is expected to throw; should something (a hostile item that makes a
 *   handler throw), the source counts as failed (`handlers.error`) rather than the stream hanging.
 *
 * **`stop()`** (the adapter's teardown, on unsubscribe): an Observable is unsubscribed; a
 * `ReadableStream` is `reader.cancel()`ed; an async iterable is pulled no more and its `return()` is
 * called (so an SDK stream closes its request: `MessageStream` aborts its request at once), unless it
 * already finished (ended or failed) — or the reader was detached, which it then stays. Not awaited: an
 * async generator settles `return()` only after its pending `next()`. A `cancel()` / `return()` that
 * rejects or throws is ignored (the source is left as it is).
 *
 * **When the source is told to stop.** By default `return()` / `cancel()` is called a microtask after
 * `stop()`, so a `return()` / `cancel()` that throws or re-enters cannot disturb the unsubscribing
 * caller. With `stopSynchronously` it is called within `stop()` (wrapped so that a throw is ignored):
 * the Anthropic adapter promises that unsubscribing tells the iterator `return()` at once, and its tests
 * check that synchronously.
 *
 * **`detach()`** (the adapter saw the last event it needs): nothing more is delivered. An Observable is
 * unsubscribed; an async iterable (or `ReadableStream`) is pulled no more — a connection that stays
 * open may carry the next response, for another reader — and its `return()` (`cancel()`) is not called:
 * on the OpenAI SDK's helper streams (`client.responses.stream()`, `client.chat.completions.stream()`)
 * `return()` aborts the request, which would fail their `finalResponse()` / `finalMessage()`. A pull
 * already pending when `detach()` comes is let settle, its item dropped. A later `stop()` does nothing.
 *
 * An item (or end, or failure) that arrives after either is dropped.
 */
export class SourceReader<T> {
  #state: 'idle' | 'reading' | 'detached' | 'stopped' = 'idle';
  #subscription: Subscription | undefined;
  /**
   * Tells an async iterable `return()` or a stream's reader `cancel()`, while it is being read; cleared
   * once it ended or failed (there is nothing to tell then), or was stopped or detached.
   */
  #cancel: (() => unknown) | undefined;

  constructor(
    private readonly source: Source<T>,
    private readonly handlers: SourceHandlers<T>,
    private readonly options: SourceReaderOptions = {},
  ) {}

  /** Starts reading; at most once. Does nothing after `stop()`. */
  start(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'reading';
    const { source, handlers } = this;
    if (isObservable(source)) {
      const subscription = source.subscribe({
        next: (item) => {
          if (!this.#isReading()) return;
          try {
            handlers.next(item);
          } catch (error) {
            // As for an iterable: a handler that throws on an item fails the source, never the process.
            this.stop();
            handlers.error(error);
          }
        },
        error: (error: unknown) => this.#isReading() && handlers.error(error),
        complete: () => this.#isReading() && handlers.complete(),
      });
      // A synchronous source may have been stopped or detached while subscribing.
      if (this.#isReading()) this.#subscription = subscription;
      else subscription.unsubscribe();
      return;
    }

    let pull: () => Promise<IteratorResult<T>>;
    try {
      if (isReadableStream(source)) {
        const reader = source.getReader();
        pull = () => reader.read() as Promise<IteratorResult<T>>;
        this.#cancel = () => reader.cancel();
      } else {
        const iterator = source[Symbol.asyncIterator]();
        pull = () => iterator.next();
        this.#cancel = () => iterator.return?.();
      }
    } catch (error) {
      // A locked stream, or an iterable that throws: the source has failed before it started.
      handlers.error(error);
      return;
    }
    this.#pull(pull).catch((error: unknown) => {
      // `handlers.error` itself threw: deliver that failure once more rather than leave it unhandled.
      this.#cancel = undefined;
      if (this.#isReading()) handlers.error(error);
    });
  }

  /** The adapter's teardown: stops reading and tells the source to stop (see the class doc). */
  stop(): void {
    if (this.#state === 'stopped' || this.#state === 'detached') return;
    this.#state = 'stopped';
    this.#release();
    const cancel = this.#cancel;
    this.#cancel = undefined;
    if (cancel === undefined) return; // never read, an Observable, or already ended or failed
    if (this.options.stopSynchronously === true) {
      try {
        Promise.resolve(cancel()).catch(() => undefined);
      } catch {
        // a return() / cancel() that throws synchronously: the source is left as it is
      }
      return;
    }
    // Deferred, so a `return()` / `cancel()` that throws or re-enters cannot disturb the caller.
    void Promise.resolve()
      .then(cancel)
      .catch(() => undefined);
  }

  /** Delivers nothing more and lets go of the source without telling it to stop (see the class doc). */
  detach(): void {
    if (this.#state !== 'reading') return;
    this.#state = 'detached';
    this.#cancel = undefined;
    this.#release();
  }

  #release(): void {
    const subscription = this.#subscription;
    this.#subscription = undefined;
    subscription?.unsubscribe();
  }

  /** Read afresh each time (not narrowed): a handler may have changed the state. */
  #isReading(): boolean {
    return this.#state === 'reading';
  }

  #isStopped(): boolean {
    return this.#state === 'stopped';
  }

  async #pull(pull: () => Promise<IteratorResult<T>>): Promise<void> {
    try {
      for (;;) {
        let step: IteratorResult<T>;
        try {
          step = await pull();
        } catch (error) {
          this.#cancel = undefined; // the source itself failed: there is nothing left to tell it
          throw error;
        }
        if (this.#isStopped()) return;
        if (this.#state === 'detached') return; // pull no more: the source may carry what others read next
        if (step.done === true) {
          this.#cancel = undefined;
          if (this.#isReading()) this.handlers.complete();
          return;
        }
        if (this.#isReading()) this.handlers.next(step.value);
        if (this.#isStopped()) return; // the handler may have unsubscribed
      }
    } catch (error) {
      // The source failed, or a handler threw on an item: then the source is still open, and the
      // adapter's teardown (stop) tells it to stop, so an SDK stream's request does not stay open.
      if (this.#isReading()) this.handlers.error(error);
    }
  }
}

/** Duck-typed, so a stream from another realm or a polyfill is read through its reader too. */
function isReadableStream<T>(source: AsyncIterable<T> | ReadableStream<T>): source is ReadableStream<T> {
  return typeof (source as Partial<ReadableStream<T>>).getReader === 'function';
}
