import type { AbortScope } from '../types/abortScope.js';

/**
 * One abort scope, the shape every kind of stopping in the engine shares: a stage subscription, a batch
 * (everything cancelled), a policy chain, a body's attempt, a call's start checks.
 *
 * - The first `abort` wins: its reason is the scope's for good; later calls change nothing and return
 *   false, so the caller can do its own once-only work (stop a streamed body) only when it aborted.
 * - The `AbortSignal` is made on first read of `signal` (an AbortController is costly, and most work
 *   never looks); read after the abort, it is already aborted with the same reason.
 * - On abort the signal aborts first (its own listeners run), then the `onAbort` listeners, in the order
 *   they were added, from a copy: a listener removed by an earlier one in the same abort still runs.
 * - No listener list is kept until the first `onAbort`, and none after the abort.
 * - Listeners are called directly, not dispatched as events: they are the engine's own and must not
 *   throw (a throw would reach the caller of `abort`). Code outside the engine listens on `signal`.
 *
 * @example
 * const scope = new Abort();
 * const unlisten = scope.onAbort(() => console.log('stopped:', scope.reason));
 * scope.abort(new DOMException('the subscription ended', 'AbortError')); // logs, once
 * unlisten(); // a no-op now
 */
export class Abort implements AbortScope {
  #aborted = false;
  #reason: unknown = undefined;
  #controller: AbortController | undefined = undefined;
  #listeners: Set<() => void> | undefined = undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Why it aborted (the first reason given); undefined until then. */
  get reason(): unknown {
    return this.#reason;
  }

  /** The scope as an AbortSignal, made on first read; already aborted if the scope has. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts the scope with `reason`; false (and nothing happens) if it had aborted already. */
  abort(reason: unknown): boolean {
    if (this.#aborted) return false;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of [...listeners]) listener();
    return true;
  }

  /** Calls `listener` when the scope aborts (now, if it has); returns the function that unregisters it. */
  onAbort(listener: () => void): () => void {
    if (this.#aborted) {
      listener();
      return () => undefined;
    }
    const listeners = (this.#listeners ??= new Set());
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }
}
