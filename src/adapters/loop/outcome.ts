import type { JsonValue } from '../../types/json.js';
import type { PendingApproval } from '../../types/pendingApproval.js';

/**
 * The loops that make continuations; a continuation goes on only with the loop that made it.
 *
 * @example
 * ```ts
 * const provider: LoopProvider = continuation.provider; // 'anthropic' | 'openai-chat' | 'openai-responses' | 'ai-sdk'
 * ```
 */
export type LoopProvider = 'anthropic' | 'openai-chat' | 'openai-responses' | 'ai-sdk';

/**
 * What goes on with a turn that stopped before every call had its answer (`suspended` for approval,
 * `turn_leased`, `lease_lost`): plain JSON, versioned, signed. Hand it to a browser with the pending
 * approvals and take it back with the answers; then `continueAnthropicTurn` (or the OpenAI and AI SDK
 * ones) — in any process, from a pipeline with the same journal store and secret — checks it, resumes
 * the turn and gives back the messages for the next request.
 *
 * Signed, not kept: everything needed to go on is in it (the assistant message the model streamed,
 * which the journal does not keep), so no store has to hold it; an HMAC-SHA256 under the pipeline's
 * `approvalSecret` (kept apart from approval tokens: one never verifies as the other) means a change to
 * any field is refused. It is readable: the assistant message (text, reasoning) is in clear, as it was
 * in the stream. Single-use: its `nonce` is consumed in the journal store when it is submitted (the
 * store's compare-and-set, as for approval tokens), so a second submit runs nothing and sends nothing
 * to the model. It expires with the approvals (`approvalTtlMs`).
 *
 * @example
 * ```ts
 * const turn = await runAnthropicTurn(pipeline, stream, { turn: 'conv-1/1' });
 * if (turn.outcome === 'suspended') reply({ continuation: turn.continuation, approvals: turn.pending });
 * // later, any process:
 * const next = await continueAnthropicTurn(pipeline, body.continuation, { answers: body.answers });
 * ```
 */
export interface Continuation {
  /** The format's version: 1. */
  readonly v: 1;
  readonly provider: LoopProvider;
  /** The durable turn it goes on with (the `turn` the response was run under). */
  readonly turn: string;
  /** The turn's step in its loop (1 for the first model response). */
  readonly step: number;
  /** The provider's own: the assistant message as streamed (and what its loop needs to answer it). */
  readonly state: JsonValue;
  /** Consumed in the journal store when submitted: a continuation is accepted once. */
  readonly nonce: string;
  /** Epoch milliseconds after which it is refused. */
  readonly expiresAt: number;
  /** base64url HMAC-SHA256 over the canonical JSON of the other fields. */
  readonly sig: string;
}

/**
 * Options of the functions that make or check continuations.
 *
 * @example
 * ```ts
 * const options: ContinuationOptions = { secret: process.env['CONTINUATION_SECRET'] };
 * ```
 */
export interface ContinuationOptions {
  /**
   * Signs and checks continuations instead of the pipeline's `approvalSecret` (at least 32 bytes);
   * every process that continues the loop must have the same.
   */
  readonly secret?: string | Uint8Array | undefined;
}

/**
 * How one model response's turn ended, for the loop:
 * - `'done'`: the model called no tool (and did not pause): stop the loop.
 * - `'next'`: every call has its result; append `messages` and request the next response.
 * - `'suspended'`: calls wait for approval (a durable turn): `pending` lists them, `continuation` goes
 *   on once they are answered. `messages` is empty: the assistant message goes back with every result,
 *   from the continuation.
 * - `'turn_leased'`: another process drives the turn: nothing ran here, nothing to send to the model.
 * - `'lease_lost'`: another process took the turn over while this one ran it: `results` holds what ran
 *   here; the process that took it answers the rest. Nothing to send to the model.
 *
 * @example
 * ```ts
 * const outcome: TurnOutcome = turn.outcome;
 * if (outcome === 'suspended') askHuman(turn.pending, turn.continuation);
 * ```
 */
export type TurnOutcome = 'done' | 'next' | 'suspended' | 'turn_leased' | 'lease_lost';

/**
 * What every provider's turn (`AnthropicTurn`, `OpenAIChatTurn`, `OpenAIResponsesTurn`) says beside its
 * own fields: how it ended, what it waits for, what goes on with it.
 *
 * @example
 * ```ts
 * function show(turn: DurableTurnFields) {
 *   if (turn.outcome === 'suspended') for (const approval of turn.pending) console.log(approval.tool, approval.reasons);
 * }
 * ```
 */
export interface DurableTurnFields {
  readonly outcome: TurnOutcome;
  /** The approvals the turn waits for, with their tokens (`pipeline.pendingApprovals(turn)`); empty unless `'suspended'`. */
  readonly pending: readonly PendingApproval[];
  /**
   * What goes on with the turn: set for `'suspended'`, and for `'turn_leased'` and `'lease_lost'` when
   * the assistant message is known in full (a continued turn): submit it again once the other process
   * is done. `undefined` otherwise.
   */
  readonly continuation: Continuation | undefined;
  /** The turn's step in its loop: 1 for a lone turn, `continuation.step` for a continued one. */
  readonly step: number;
}
