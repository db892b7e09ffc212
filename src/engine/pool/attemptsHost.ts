import type { CallRecord } from '../records/callRecord.js';
import type { CancelReason } from '../../types/toolError.js';

// The seam between the pool and the attempts (`Attempts`): what each tells the other. Apart, so that
// neither module imports the other.

/**
 * How a call's time in its slot ended, for the pool to act on. The attempts have set the call's result
 * (if it has a new one) and freed its slot, or hold it for the grace (rule 4).
 * - `answered`: a value, or a start check's denial; it cancels nothing.
 * - `failed`: a failure of its mode (a throw, a rejection, a stream error, a timeout, outcome unknown):
 *   `onError` decides whether the rest of its turn is cancelled.
 * - `suspended`: a program stopped on suspended approvals (rule 9); it holds its place.
 * - `freed`: its slot is free, and the call was answered before (cancelled while it ran or checked).
 * - `late`: a body reported after its slot was freed or the pool closed.
 */
export type AttemptOutcome = 'answered' | 'failed' | 'suspended' | 'freed' | 'late';

/** What the attempts need of the pool whose slot a call holds. */
export interface AttemptsHost {
  /** The output completed or was torn down: nothing starts any more, and reports are late. */
  readonly closed: boolean;
  /**
   * Frees the call's slot: its run is done, and what it holds at its gates goes back. Nothing starts in
   * it yet: every release is followed by `ended` (or is part of cancelling the rest), whose pump starts
   * what the slot and the permit let start — after the call's result, if it has one, was counted.
   */
  release(record: CallRecord): void;
  /** The call's time in its slot ended so (see {@link AttemptOutcome}). */
  ended(record: CallRecord, outcome: AttemptOutcome): void;
  /** A rate-limited tool's body starts: its token is spent. */
  spend(record: CallRecord): void;
  /**
   * A retry of a rate-limited tool takes a token of its own: `held` it has one; else it waits for it,
   * `waiting` in its slot (an exclusive call) or `parked` without it (the pool took the slot back), and
   * `resume` is called once it holds the token and a slot again.
   */
  retake(record: CallRecord, resume: () => void): 'held' | 'waiting' | 'parked';
  /** Whether the call holds a slot (a parked retry does not). */
  holdsSlot(record: CallRecord): boolean;
  /** A body asked to cancel the rest of its batch (`ctx.cancelRest()`). */
  cancelRest(reason: CancelReason, by: CallRecord): void;
}
