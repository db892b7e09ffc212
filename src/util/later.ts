/**
 * A value that comes later, told **synchronously** to whoever waits for it: a settle-once cell with a
 * `then`. It is the engine's promise: a native promise resumes its callbacks a microtask later, so a
 * chain built on promises can never stay synchronous, and inside `TestScheduler.run()` a wait on a
 * promise never resumes at all (virtual time runs to the end first). A `Later` resumes at the moment
 * it settles: a policy answering at frame 30 continues the chain at frame 30, and one already settled
 * continues at once.
 *
 * 1. It settles once: `resolve` or `reject` after the first is ignored.
 * 2. `resolve(thenable)` adopts it: a `Later` at once when it settles, any other thenable (a native
 *    promise) when that one calls back.
 * 3. `then(onValue, onError)` returns a new `Later`; a callback that throws rejects it (a throw never
 *    escapes into whoever settled the cell), a callback that returns a thenable is adopted.
 * 4. It never reports an unhandled rejection: the engine always reads what it settled with.
 *
 * It is a `PromiseLike`, so `await later` works (and resumes a microtask later, as `await` does).
 */
export class Later<T> implements PromiseLike<T> {
  /** 0 pending, 1 fulfilled, 2 rejected. */
  #state: 0 | 1 | 2 = 0;
  #value: unknown = undefined;
  /** Resolved with a thenable it now follows: neither `resolve` nor `reject` changes it any more. */
  #locked = false;
  /** The callbacks waiting while pending; dropped once settled. */
  #waiting: Array<(state: 1 | 2, value: unknown) => void> | undefined = undefined;

  /** A `Later` of `input`: itself if it is one, else one that adopts it (a plain value is settled at once). */
  static from<T>(input: T | PromiseLike<T>): Later<T> {
    if (input instanceof Later) return input as Later<T>;
    const later = new Later<T>();
    later.resolve(input);
    return later;
  }

  /** A `Later` already rejected with `error`. */
  static rejected<T = never>(error: unknown): Later<T> {
    const later = new Later<T>();
    later.reject(error);
    return later;
  }

  /** Whether it has settled (either way). */
  get settled(): boolean {
    return this.#state !== 0;
  }

  resolve(value: T | PromiseLike<T>): void {
    if (this.#state !== 0 || this.#locked) return;
    this.#adopt(value);
  }

  reject(error: unknown): void {
    if (this.#state === 0 && !this.#locked) this.#settle(2, error);
  }

  then<R1 = T, R2 = never>(
    onValue?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onError?: ((error: unknown) => R2 | PromiseLike<R2>) | null,
  ): Later<R1 | R2> {
    const next = new Later<R1 | R2>();
    this.#listen((state, value) => {
      const handler = state === 1 ? onValue : onError;
      if (typeof handler !== 'function') {
        next.#settle(state, value);
        return;
      }
      try {
        next.resolve((handler as (v: unknown) => R1 | R2 | PromiseLike<R1 | R2>)(value));
      } catch (error) {
        next.reject(error);
      }
    });
    return next;
  }

  /** Settles with `value`, or follows it if it is a thenable (locked meanwhile: a later `resolve` is ignored). */
  #adopt(value: unknown): void {
    if (value === this) {
      this.#settle(2, new TypeError('a Later cannot resolve to itself'));
      return;
    }
    if (value instanceof Later) {
      this.#locked = true;
      value.#listen((state, settled) => this.#settle(state, settled));
      return;
    }
    let then: unknown;
    try {
      then = (typeof value === 'object' && value !== null) || typeof value === 'function' ? (value as PromiseLike<T>).then : undefined;
    } catch (error) {
      this.#settle(2, error);
      return;
    }
    if (typeof then !== 'function') {
      this.#settle(1, value);
      return;
    }
    // A foreign thenable may call back twice, or call back and then throw: its first word wins.
    this.#locked = true;
    let answered = false;
    try {
      (then as PromiseLike<unknown>['then']).call(
        value,
        (v) => {
          if (answered) return;
          answered = true;
          this.#adopt(v);
        },
        (error) => {
          if (answered) return;
          answered = true;
          this.#settle(2, error);
        },
      );
    } catch (error) {
      if (!answered) {
        answered = true;
        this.#settle(2, error);
      }
    }
  }

  #listen(callback: (state: 1 | 2, value: unknown) => void): void {
    if (this.#state !== 0) callback(this.#state, this.#value);
    else (this.#waiting ??= []).push(callback);
  }

  #settle(state: 1 | 2, value: unknown): void {
    if (this.#state !== 0) return;
    this.#state = state;
    this.#value = value;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting !== undefined) for (const callback of waiting) callback(state, value);
  }
}

/** A value now, or a {@link Later} of it: code on it stays synchronous while everything answers at once. */
export type MaybeLater<T> = T | Later<T>;

/** Whether `value` is a thenable (a `Later`, a native promise, any object with a `then` method). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  if (value instanceof Later || value instanceof Promise) return true;
  return ((typeof value === 'object' && value !== null) || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * `then` applied to `value` now if it is a plain value, or once it settles if it is a thenable (as a
 * `Later`, so a `Later` already settled continues at once): a value stays synchronous.
 */
export function thenOrNow<T, R>(value: T | PromiseLike<T>, then: (value: T) => MaybeLater<R> | PromiseLike<R>): MaybeLater<R> {
  if (isThenable(value)) return Later.from(value).then(then) as Later<R>;
  const result = then(value);
  return isThenable(result) && !(result instanceof Later) ? Later.from(result) : (result as MaybeLater<R>);
}

/**
 * `then` applied to `value` now if it is a value, or the moment it settles if it is a `Later`: for code
 * whose every pending outcome is the engine's own `Later` (a chain), this is {@link thenOrNow} without
 * its look for foreign thenables (a property read per step on the synchronous path).
 */
export function laterOrNow<T, R>(value: MaybeLater<T>, then: (value: T) => MaybeLater<R>): MaybeLater<R> {
  return value instanceof Later ? (value.then(then) as Later<R>) : then(value);
}
