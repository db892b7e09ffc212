import { brand } from '../internal/brand.js';

/**
 * Why a durable turn could not be run, resumed or answered — nothing ran when this is thrown:
 * - `turn_exists`: `run(calls, { turn })` for a turn the journal already holds: resume it instead.
 * - `turn_unknown`: `resume(turn)` for a turn the journal does not hold.
 * - `turn_leased`: another process drives the turn now (its lease is live): try again after it ends.
 * - `token_malformed`, `token_forged`: not a token this pipeline's secret signed (or altered).
 * - `token_wrong_turn`, `token_unknown_call`: a valid token, for another turn, or a call this turn lacks.
 * - `token_expired`: past its `expiresAt`.
 * - `token_used`: its approval was answered already (or replaced by a newer one).
 * - `turn_suspended`: a formatter was given the results of a turn with suspended calls: resume it first.
 * - `journal_failed`: the store failed; the turn is not durable past this point.
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
      | 'journal_failed',
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DurableTurnError';
  }
}
