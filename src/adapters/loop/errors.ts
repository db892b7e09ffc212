import { brand } from '../../util/brand.js';
import type { Continuation } from './outcome.js';

/**
 * Why a continuation was refused. Nothing ran and nothing was sent to the model when this is
 * thrown:
 * - `continuation_malformed`: not a continuation (not an object, a field missing or of the wrong
 *   type, or a version other than 1).
 * - `continuation_forged`: its signature does not hold under the secret: altered, or signed by another
 *   secret.
 * - `continuation_expired`: past its `expiresAt` (the pipeline's `approvalTtlMs` after it was issued).
 * - `continuation_wrong_provider`: made by another provider's loop (an Anthropic one given to an OpenAI
 *   loop).
 * - `continuation_wrong_pipeline`: signed by this secret, but this pipeline's journal does not hold its
 *   turn (another store, or the turn was pruned); or the pipeline has no journal.
 * - `continuation_used`: it was submitted before (a double submit): the first submit goes on with the
 *   turn, this one runs nothing and sends nothing to the model.
 * - `answer_not_pending`: an answer's token is not one of the approvals the turn waits for (answered
 *   already, another turn's, or altered). The continuation submitted was consumed; `continuation`
 *   holds a fresh one for the same turn, so a corrected submit still goes on.
 *
 * @example
 * ```ts
 * try {
 *   await continueAnthropicTurn(pipeline, body.continuation, { answers: body.answers });
 * } catch (error) {
 *   if (error instanceof ContinuationError && error.code === 'continuation_used') return reply(409, 'already submitted');
 *   throw error;
 * }
 * ```
 */
export class ContinuationError extends Error {
  static {
    brand(this, 'ContinuationError');
  }

  constructor(
    readonly code:
      | 'continuation_malformed'
      | 'continuation_forged'
      | 'continuation_expired'
      | 'continuation_wrong_provider'
      | 'continuation_wrong_pipeline'
      | 'continuation_used'
      | 'answer_not_pending',
    message: string,
    /** For `answer_not_pending`: a fresh continuation of the same turn, to submit corrected answers with. */
    readonly continuation?: Continuation,
  ) {
    super(message);
    this.name = 'ContinuationError';
  }
}
