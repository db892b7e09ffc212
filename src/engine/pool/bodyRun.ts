import type { Unsubscribable } from 'rxjs';
import { Abort } from '../../stream/abortScope.js';

/**
 * The state of one running body, from its start until it settles: short-lived, so the long-lived
 * `CallRecord` of every queued call stays small. A call with start checks runs them under one of its
 * own; a retried call has one per attempt (and one for each delay between attempts, holding the slot).
 * It is its own abort scope (one object a call, not two): its `signal` is created on first read of
 * `ctx.signal`, as most bodies never look.
 */
export class BodyRun extends Abort {
  /** The body settled or was abandoned; its slot is free. */
  done = false;
  /** The pending timeout, then the pending grace period. */
  timer: Unsubscribable | undefined = undefined;
  /**
   * A timed-out attempt that will be retried after this delay, once its body settled (at most
   * `abortGraceMs`): the next attempt never overlaps it.
   */
  retryAfterMs: number | undefined = undefined;
  /** Stops a streamed body; returns true when the body is thereby finished (an unsubscribed Observable). */
  stopBody: (() => boolean) | undefined = undefined;

  constructor(
    /** The body runs alone. */
    readonly exclusive: boolean,
  ) {
    super();
  }

  /**
   * Aborts the body's signal (once) and stops a streamed body. Returns true when the body is thereby
   * finished (an unsubscribed Observable); false if it was stopped already, or winds down on its own.
   */
  stop(reason: unknown): boolean {
    if (!this.abort(reason)) return false;
    return this.stopBody?.() ?? false;
  }

  clearTimer(): void {
    this.timer?.unsubscribe();
    this.timer = undefined;
  }
}
