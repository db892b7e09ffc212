/** Where a {@link Drain} sends the end: an RxJS `Subscriber` fits. */
export interface DrainTarget {
  /** Already ended or unsubscribed: the drain leaves it alone. */
  readonly closed: boolean;
  error(error: unknown): void;
  complete(): void;
}

/** How the source ended: it completed, or it errored with `error`. */
export type SourceEnd = 'complete' | { readonly error: unknown };

/**
 * "The source ended and nothing is in flight → end the output": the one copy of the rule every
 * custom operator that holds values back needs (the policy stages, the pool, the journal's gates,
 * reorder). Without it an operator completes while work it took in is still out, or errors before
 * the values ahead of the error are delivered.
 *
 * ```
 * source:     -a-b-|            (a's work settles at 4, b's at 6)
 * in flight:   1 2 2 1 0
 * output:     ----a-b|          (completes when b is out, not when the source completes)
 * ```
 *
 * 1. `add()` when work is taken in, `settle()` when it is out (delivered or dropped). `settle` does not
 *    close: the caller delivers first, then calls `closeIfDone()`, so the end never overtakes a value.
 * 2. `complete()` / `error(e)` record the source's end and close if nothing is in flight; `end(how)`
 *    only records it, for an owner that decides itself when to close (`idle`, then `close()`).
 * 3. The output ends once, with the first of: a failure of the operator's own (`fail(e)`: it waits for
 *    the source and the work in flight like the source's end does, and wins over it), the source's
 *    error, a `verify()` failure (what a clean end must still hold), or completion.
 * 4. A target already `closed` (errored by its owner, or unsubscribed) is left alone.
 *
 * Nothing here allocates per value; state is per subscription (make one `Drain` in the subscribe function).
 *
 * @example
 * ```ts
 * new Observable<T>((subscriber) => {
 *   const drain = new Drain(subscriber);
 *   subscribeAsChild(subscriber, source, {
 *     next(value) {
 *       drain.add();
 *       work(value).then(() => {
 *         drain.settle();
 *         subscriber.next(value);
 *         drain.closeIfDone();
 *       });
 *     },
 *     error: (error: unknown) => drain.error(error),
 *     complete: () => drain.complete(),
 *   });
 * });
 * ```
 */
export class Drain {
  /** Work taken in and not yet out. */
  private inFlight = 0;
  private sourceEnd: SourceEnd | undefined = undefined;
  private failure: { readonly error: unknown } | undefined = undefined;
  private closed = false;

  /**
   * @param target - the output to end.
   * @param verify - called once when the output would complete cleanly; an error it returns is sent
   *   instead (a broken invariant, such as values still held back).
   */
  constructor(
    private readonly target: DrainTarget,
    private readonly verify?: () => Error | undefined,
  ) {}

  /** The source has ended (completed or errored). */
  get ended(): boolean {
    return this.sourceEnd !== undefined;
  }

  /** The source has ended with an error. */
  get sourceFailed(): boolean {
    return this.sourceEnd !== undefined && this.sourceEnd !== 'complete';
  }

  /** The operator has failed on its own (`fail`). */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** The source has ended and nothing is in flight. */
  get idle(): boolean {
    return this.sourceEnd !== undefined && this.inFlight === 0;
  }

  /** One more piece of work in flight. */
  add(): void {
    this.inFlight++;
  }

  /** One fewer in flight. Does not close: deliver what it produced, then call `closeIfDone()`. */
  settle(): void {
    this.inFlight--;
  }

  /** Records how the source ended, without closing. */
  end(how: SourceEnd): void {
    this.sourceEnd = how;
  }

  /** The source completed: close if nothing is in flight. */
  complete(): void {
    this.sourceEnd = 'complete';
    this.closeIfDone();
  }

  /** The source errored: close with its error once nothing is in flight. */
  error(error: unknown): void {
    this.sourceEnd = { error };
    this.closeIfDone();
  }

  /** The operator's own failure; the first one counts, and it still waits for the source and the work. */
  fail(error: unknown): void {
    this.failure ??= { error };
  }

  /** Ends the target if the source has ended and nothing is in flight. */
  closeIfDone(): void {
    if (this.idle && !this.closed && !this.target.closed) this.close();
  }

  /** Ends the target now, once: own failure, else the source's error, else `verify()`, else complete. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const end = this.failure ?? (this.sourceEnd === 'complete' ? undefined : this.sourceEnd);
    if (end !== undefined) return this.target.error(end.error);
    const broken = this.verify?.();
    if (broken !== undefined) this.target.error(broken);
    else this.target.complete();
  }
}
