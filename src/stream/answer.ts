import { from, isObservable, observable, type ObservableInput, type Subscription } from 'rxjs';
import { isThenable, Later } from '../util/later.js';
import { ChainAnswer } from './chainAnswer.js';

/** The message of the error an answer stream that completed without a value fails with. */
export const NO_ANSWER = 'completed without answering';

/**
 * Whether `error` is the failure of an answer stream that completed without a value (by its message:
 * each is a new `Error`). Never throws, even for a thrown Proxy whose traps do.
 */
export function isNoAnswer(error: unknown): boolean {
  try {
    return error instanceof Error && error.message === NO_ANSWER;
  } catch {
    return false;
  }
}

/**
 * The one answer a callback gave, pending: a {@link Later} that `cancel()` stops waiting for (it
 * unsubscribes a stream; a promise cannot be stopped, so its late answer is ignored). Cancelled, it
 * never settles: whoever cancels decides the outcome.
 */
export class PendingAnswer<T> extends Later<T> {
  #subscription: Subscription | undefined = undefined;
  #cancelled = false;

  /** @internal */
  follow(subscription: Subscription): void {
    if (this.#cancelled || this.settled) subscription.unsubscribe();
    else this.#subscription = subscription;
  }

  /** Stop waiting: unsubscribe the stream (if any) and ignore whatever it or the promise answers later. */
  cancel(): void {
    if (this.#cancelled || this.settled) return;
    this.#cancelled = true;
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
  }

  override resolve(value: T | PromiseLike<T>): void {
    if (!this.#cancelled) super.resolve(value);
  }

  override reject(error: unknown): void {
    if (!this.#cancelled) super.reject(error);
  }
}

/** Whether `input` is a stream to take the first value of (an Observable, an interop one, an async iterable). */
function isAnswerStream(input: object): boolean {
  return (
    isObservable(input) ||
    typeof (input as Record<string | symbol, unknown>)[observable] === 'function' ||
    typeof (input as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

/**
 * What a callback that answers once (a policy, a result middleware, an approver, a start check)
 * answered, as a value when it answered at once, else as a {@link PendingAnswer}:
 *
 * 1. A plain value (a primitive, `null`, an array, a string, any object that is neither) is the answer.
 *    Iterables are values here, not streams: an approver's `'allowed-once'` is a string.
 * 2. An Observable, an interop observable (`Symbol.observable`) or an async iterable: its **first
 *    value** is the answer, and it is unsubscribed at once (also when the value came during
 *    `subscribe`); an error is a failure; completing without a value fails with
 *    {@link NO_ANSWER}. A stream that answers during `subscribe` (`of(x)`) gives the value at once.
 * 3. A thenable (a promise, a `Later`) answers when it settles: a settled `Later` at once.
 *
 * A stream that errors during `subscribe` gives a settled, rejected answer (never a throw).
 */
export function toAnswer<T>(input: T | ObservableInput<T> | PromiseLike<T>): T | Later<T> {
  if (typeof input !== 'object' || input === null) {
    return typeof input === 'function' && isThenable(input) ? Later.from(input as PromiseLike<T>) : (input as T);
  }
  if (isAnswerStream(input)) return firstOf(input as ObservableInput<T>);
  if (isThenable(input)) return input instanceof Later ? (input as Later<T>) : Later.from(input as PromiseLike<T>);
  return input as T;
}

/** The first value of `stream`: the value itself if it came during `subscribe`, else a pending answer. */
function firstOf<T>(stream: ObservableInput<T>): T | Later<T> {
  if (stream instanceof ChainAnswer) {
    const now = stream.now();
    if (now !== undefined) return now.ok ? (now.value as T) : Later.rejected(now.error);
  }
  let answer: PendingAnswer<T> | undefined;
  let subscription: Subscription | undefined;
  // How the stream answered while `subscribe` ran (state 0: not yet).
  let state: 0 | 1 | 2 = 0;
  let early: unknown;
  const settle = (to: 1 | 2, value: unknown) => {
    if (state !== 0) return;
    state = to;
    if (answer === undefined) early = value;
    else if (to === 1) answer.resolve(value as T);
    else answer.reject(value);
    subscription?.unsubscribe(); // undefined while `subscribe` runs: unsubscribed just below
  };
  subscription = from(stream).subscribe({
    next: (value) => settle(1, value),
    error: (error: unknown) => settle(2, error),
    complete: () => settle(2, new Error(NO_ANSWER)),
  });
  if (state !== 0) {
    subscription.unsubscribe();
    return state === 1 ? (early as T) : Later.rejected(early);
  }
  answer = new PendingAnswer<T>();
  answer.follow(subscription);
  return answer;
}
