import { brand } from '../util/brand.js';
import type { ToolResult } from '../types/toolResult.js';

/**
 * Why a durable turn could not be run, resumed or answered. From `run`/`resume`, nothing ran when this
 * is thrown, but for `lease_lost` and `journal_failed`, which stop a run midway. `turn_suspended` is a
 * formatter's (`toAnthropicToolResults`, …): the turn ran, and its calls that could did — only the
 * message for the model cannot be made yet. (The loop helpers — `runAnthropicTurn`, … — do not throw
 * it: a suspended turn resolves with `outcome: 'suspended'` and a continuation.)
 * - `turn_exists`: `run(calls, { turn })` for a turn the journal already holds: resume it instead.
 * - `turn_unknown`: `resume(turn)` for a turn the journal does not hold.
 * - `turn_leased`: another process drives the turn now (its lease is live): try again after it ends.
 * - `token_malformed`, `token_forged`: not a token this pipeline's secret signed (or altered).
 * - `token_wrong_turn`, `token_unknown_call`: a valid token, for another turn, or a call this turn lacks.
 * - `token_expired`: past its `expiresAt`.
 * - `token_used`: its approval was answered already (or replaced by a newer one).
 * - `turn_suspended`: a formatter was given the results of a turn with suspended calls (the others
 *   had run): resume it first, or use the loop helpers, which resolve with a continuation instead.
 * - `journal_failed`: the store failed; the turn is not durable past this point.
 * - `lease_lost`: another process took the turn over while this one ran it (this process stalled past
 *   its lease — a pause, a slow disk — or could not renew it before it expired). The run stopped at
 *   once: no body started after, those in flight saw their signal abort, nothing more was journaled.
 *   `results` holds what the run gave out before (each final: journaled under the lease); the process
 *   that took the turn answers the rest — resume it there, or here once it is done, for the whole turn.
 *
 * @example
 * ```ts
 * try {
 *   await pipeline.resume(turn, { answers });
 * } catch (error) {
 *   if (error instanceof DurableTurnError && error.code === 'turn_leased') retryLater();
 * }
 * ```
 */
export class DurableTurnError extends Error {
  static {
    brand(this, 'DurableTurnError');
  }

  /** For `lease_lost` (from `run`/`resume`): the results the run gave out before it stopped, in order; empty otherwise. */
  readonly results: readonly ToolResult[];

  constructor(
    readonly code:
      | 'turn_exists'
      | 'turn_unknown'
      | 'turn_leased'
      | 'token_malformed'
      | 'token_forged'
      | 'token_wrong_turn'
      | 'token_unknown_call'
      | 'token_expired'
      | 'token_used'
      | 'turn_suspended'
      | 'journal_failed'
      | 'lease_lost',
    message: string,
    options?: { readonly cause?: unknown; readonly results?: readonly ToolResult[] },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DurableTurnError';
    this.results = options?.results ?? [];
  }
}
