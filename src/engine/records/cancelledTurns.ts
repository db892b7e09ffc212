import type { Cancellation } from './callRecord.js';

/** A turn as a batch keys it: the call's `turn`, or `undefined` for the subscription's anonymous turn. */
export type TurnKey = string | undefined;

/** How many cancelled turns that are over a subscription remembers, to cancel their stragglers too. */
export const RECENT_CANCELLED_TURNS = 1_000;

/**
 * The turns of one subscription that a failure or `ctx.cancelRest()` cancelled, for as long as they
 * matter: a conversation that runs for days through one `operator()` keeps bounded memory.
 *
 * - A cancelled turn stays cancelled while it has an unfinished call — received (counted in after
 *   intake) and not yet answered, wherever it is: a policy, an approval, the pool. So cancel-rest
 *   reaches every one of them, and every call of the turn that arrives meanwhile is cancelled.
 * - Once it has none, the turn is *over*. The last {@link RECENT_CANCELLED_TURNS} turns that ended so
 *   are still remembered: a straggler of one of them (a call of the turn arriving after its other calls
 *   were all answered: a replay, a slow stream) is cancelled, and the turn is unfinished again until it
 *   is answered. A call of a turn that ended cancelled longer ago starts the turn afresh.
 * - The anonymous turn is the subscription itself: once cancelled, it stays so.
 * - A turn keeps its key and who cancelled it (the reason, the failing call's id and name), never the
 *   failing call's record — its arguments, error and stack, about 1 KB a turn (issue 24, finding 3).
 *
 * @example
 * ```ts
 * const turns = new CancelledTurns();
 * turns.received('msg_1'); // a call of msg_1 entered the batch
 * turns.cancel('msg_1', { reason: 'sibling_failed', by: failing }); // true: cancelled now
 * turns.answered('msg_1'); // its last unfinished call was answered: msg_1 is over
 * turns.get('msg_1'); // still the cancellation, until 1,000 more cancelled turns are over
 * ```
 */
export class CancelledTurns {
  readonly #cancelled = new Map<TurnKey, Cancellation>();
  /** Unfinished calls of each named turn that has any. */
  readonly #open = new Map<string, number>();
  /** The cancelled turns that are over, in the order they ended (a Set keeps insertion order). */
  readonly #over = new Set<string>();

  /** Why `turn` was cancelled, if it was and is remembered. */
  get(turn: TurnKey): Cancellation | undefined {
    return this.#cancelled.get(turn);
  }

  /** Cancels `turn`; false when it is cancelled already. */
  cancel(turn: TurnKey, cancellation: Cancellation): boolean {
    if (this.#cancelled.has(turn)) return false;
    const { reason, by } = cancellation;
    this.#cancelled.set(turn, Object.freeze({ reason, by: by === undefined ? undefined : Object.freeze({ id: by.id, name: by.name }) }));
    if (turn !== undefined && !this.#open.has(turn)) this.#ended(turn);
    return true;
  }

  /** A call of `turn` entered the batch. */
  received(turn: TurnKey): void {
    if (turn === undefined) return;
    this.#open.set(turn, (this.#open.get(turn) ?? 0) + 1);
    this.#over.delete(turn); // a straggler: unfinished again
  }

  /** A call of `turn` was answered. */
  answered(turn: TurnKey): void {
    if (turn === undefined) return;
    const open = this.#open.get(turn) ?? 0;
    if (open > 1) return void this.#open.set(turn, open - 1);
    this.#open.delete(turn);
    // Not counted in (a pool used without the stages): over as soon as it is cancelled, once.
    if (this.#cancelled.has(turn) && !this.#over.has(turn)) this.#ended(turn);
  }

  /** A cancelled turn is over: remembered among the recent ones, and the oldest beyond them forgotten. */
  #ended(turn: string): void {
    this.#over.add(turn); // never in it here: it left when it was received again
    if (this.#over.size <= RECENT_CANCELLED_TURNS) return;
    const oldest = this.#over.values().next().value!;
    this.#over.delete(oldest);
    this.#cancelled.delete(oldest);
  }
}
