import { Observable, type Subscriber, type TeardownLogic } from 'rxjs';
import type { NextAnswer } from '../types/answer.js';
import { Later, type MaybeLater } from '../util/later.js';

/** How the rest of a chain ended, once it has. */
export type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/**
 * The engine's {@link NextAnswer}: the rest of a chain, already running (its outcome is `rest`), given
 * to a middleware as an Observable that is also a promise.
 *
 * 1. Subscribing delivers the outcome: `next(value)` then `complete()`, or `error(e)`; at once if it has
 *    settled, else when it settles (synchronously, at that moment). Nothing is ever run again.
 * 2. A subscription that comes after a subscriber has seen the failure is a retry: it gets the same
 *    error, by identity, and `onRetry` is told (the chain records it).
 * 3. `then`/`catch`/`finally` go through one native promise, made on first use and marked handled (an
 *    unread failure is the chain's to report, not an unhandled rejection).
 */
export class ChainAnswer<T> extends Observable<T> implements NextAnswer<T> {
  /** 0 pending, 1 fulfilled, 2 rejected. */
  #state: 0 | 1 | 2 = 0;
  #value: unknown = undefined;
  #rest: Later<T> | undefined = undefined;
  #errorSeen = false;
  #promise: Promise<T> | undefined = undefined;

  constructor(
    rest: MaybeLater<T>,
    private readonly onRetry?: () => void,
  ) {
    super();
    if (!(rest instanceof Later)) {
      this.#state = 1;
      this.#value = rest;
      return;
    }
    this.#rest = rest;
    rest.then(
      (value) => this.#settle(1, value),
      (error: unknown) => this.#settle(2, error),
    );
  }

  /** The outcome if the rest of the chain has ended, else `undefined`. */
  now(): Settled<T> | undefined {
    if (this.#state === 1) return { ok: true, value: this.#value as T };
    if (this.#state === 2) return { ok: false, error: this.#value };
    return undefined;
  }

  /** The outcome as a `MaybeLater`: the value when fulfilled, else a `Later` (settled or not). */
  later(): MaybeLater<T> {
    if (this.#state === 1) return this.#value as T;
    return this.#rest ?? Later.rejected<T>(this.#value);
  }

  /** @internal RxJS calls it for each subscriber. */
  protected _subscribe(subscriber: Subscriber<T>): TeardownLogic {
    if (this.#state === 2 && this.#errorSeen) this.onRetry?.();
    if (this.#state !== 0) this.#deliver(subscriber);
    else
      this.#rest!.then(
        () => this.#deliver(subscriber),
        () => this.#deliver(subscriber),
      );
  }

  then<R1 = T, R2 = never>(
    onValue?: ((value: T) => R1 | PromiseLike<R1>) | null,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Promise<T> declares it
    onError?: ((reason: any) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#asPromise().then(onValue, onError);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Promise<T> declares it
  catch<R = never>(onError?: ((reason: any) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#asPromise().catch(onError);
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.#asPromise().finally(onFinally);
  }

  get [Symbol.toStringTag](): string {
    return 'NextAnswer';
  }

  #asPromise(): Promise<T> {
    if (this.#promise === undefined) {
      const promise = this.#state === 1 ? Promise.resolve(this.#value as T) : this.#state === 2 ? Promise.reject(this.#value) : new Promise<T>((resolve, reject) => this.#rest!.then(resolve, reject));
      promise.catch(() => undefined);
      this.#promise = promise;
    }
    return this.#promise;
  }

  #settle(state: 1 | 2, value: unknown): void {
    this.#state = state;
    this.#value = value;
  }

  #deliver(subscriber: Subscriber<T>): void {
    if (subscriber.closed) return;
    if (this.#state === 1) {
      subscriber.next(this.#value as T);
      subscriber.complete();
      return;
    }
    this.#errorSeen = true;
    subscriber.error(this.#value);
  }
}
