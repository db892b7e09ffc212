import { isObservable, type Observable, type Subscription } from 'rxjs';

/** What a stream adapter does with each item of its source, and with its end. */
export interface SourceHandlers<T> {
  next(item: T): void;
  complete(): void;
  error(error: unknown): void;
}

/**
 * Reads an Observable or an async iterable item by item into `handlers`. Internal: not exported from
 * the package.
 *
 * - `stop()` (the adapter's teardown, on unsubscribe): an Observable is unsubscribed; an async
 *   iterable is pulled no more and its `return()` is called (so an SDK stream closes its request),
 *   unless it already finished.
 * - `detach()` (the adapter saw the last event it needs): nothing more is delivered. An Observable is
 *   unsubscribed; an async iterable is read on to its end with its items and any error ignored, and its
 *   `return()` is not called — on the SDK's helper streams (`client.responses.stream()`,
 *   `client.chat.completions.stream()`) `return()` aborts the request, which would fail their
 *   `finalResponse()` / `finalMessage()`.
 *
 * An item that arrives after either is dropped.
 */
export class SourceReader<T> {
  #state: 'idle' | 'reading' | 'detached' | 'stopped' = 'idle';
  #subscription: Subscription | undefined;
  #iterator: AsyncIterator<T> | undefined;
  #finished = false;

  constructor(
    private readonly source: AsyncIterable<T> | Observable<T>,
    private readonly handlers: SourceHandlers<T>,
  ) {}

  start(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'reading';
    const { source, handlers } = this;
    if (isObservable(source)) {
      const subscription = source.subscribe({
        next: (item) => this.#state === 'reading' && handlers.next(item),
        error: (error: unknown) => this.#state === 'reading' && handlers.error(error),
        complete: () => this.#state === 'reading' && handlers.complete(),
      });
      // A synchronous source may have been stopped or detached while subscribing.
      if (this.#state === 'reading') this.#subscription = subscription;
      else subscription.unsubscribe();
      return;
    }
    try {
      this.#iterator = source[Symbol.asyncIterator]();
    } catch (error) {
      this.#finished = true;
      handlers.error(error);
      return;
    }
    void this.#pull(this.#iterator);
  }

  stop(): void {
    const wasReading = this.#state === 'reading';
    if (this.#state === 'stopped' || this.#state === 'detached') return;
    this.#state = 'stopped';
    this.#release();
    const iterator = this.#iterator;
    if (wasReading && iterator !== undefined && !this.#finished) {
      // Deferred, so a `return()` that throws or re-enters cannot disturb the unsubscribing caller.
      void Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => undefined);
    }
  }

  detach(): void {
    if (this.#state !== 'reading') return;
    this.#state = 'detached';
    this.#release();
  }

  #release(): void {
    const subscription = this.#subscription;
    this.#subscription = undefined;
    subscription?.unsubscribe();
  }

  /** Read afresh (not narrowed): a handler may have changed the state. */
  #isStopped(): boolean {
    return this.#state === 'stopped';
  }

  async #pull(iterator: AsyncIterator<T>): Promise<void> {
    try {
      for (;;) {
        const step = await iterator.next();
        if (this.#state === 'stopped') return;
        if (step.done === true) {
          this.#finished = true;
          if (this.#state === 'reading') this.handlers.complete();
          return;
        }
        if (this.#state === 'reading') this.handlers.next(step.value);
        if (this.#isStopped()) return; // the handler may have unsubscribed
      }
    } catch (error) {
      this.#finished = true;
      if (this.#state === 'reading') this.handlers.error(error);
    }
  }
}
