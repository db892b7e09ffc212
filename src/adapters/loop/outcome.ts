import type { PendingApproval } from '../../types/pendingApproval.js';
import type { Continuation } from './continuation.js';

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
