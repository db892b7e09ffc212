import { Abort } from '../../stream/abortScope.js';
import type { AbortScope } from '../../types/abortScope.js';
import { cancelledAbort, type Cancellation, type CallRecord } from './callRecord.js';
import { CancelledTurns, type TurnKey } from './cancelledTurns.js';

/**
 * The cancellations of one batch (one subscription), shared by the stages: the execute stage decides
 * them, and the policy stages before it follow, so a call still in its policy chain or awaiting
 * approval is cancelled at once instead of waiting for an answer that no longer matters.
 *
 * - The run's signal cancels everything (`cancelAll`).
 * - A failure under cancel-rest, or `ctx.cancelRest()`, cancels one turn (`cancelTurn`): only calls of
 *   that turn are reached; the other turns of a long-lived subscription go on. How long a turn stays
 *   cancelled is `CancelledTurns`': the batch counts each call in after intake (`received`) and out when
 *   the pool answers it (`answered`).
 */
export class BatchCancel {
  /** Everything cancelled; its signal is made when a policy stage is set up (never without policies). */
  readonly #everything = new Abort();
  /** Why everything was cancelled; set once. */
  #all: Cancellation | undefined = undefined;
  /** The cancelled turns, while they matter. */
  readonly #turns = new CancelledTurns();
  /** Who waits to hear that a turn was cancelled: calls in the policy stages. */
  readonly #listeners = new Map<TurnKey, Set<() => void>>();

  /** Aborts when everything is cancelled (not when one turn is). */
  get signal(): AbortSignal {
    return this.#everything.signal;
  }

  /** Why `record` was cancelled, if its turn (or everything) was. */
  cancellationOf(record: CallRecord): Cancellation | undefined {
    return this.#all ?? this.#turns.get(record.turn);
  }

  cancelAll(cancellation: Cancellation): void {
    if (this.#all !== undefined) return;
    this.#all = cancellation;
    const listeners = [...this.#listeners.values()].flatMap((set) => [...set]);
    this.#listeners.clear();
    // The stages' scopes hear it first (through the signal), then the calls waiting on their turn.
    this.#everything.abort(cancelledAbort(cancellation));
    for (const listener of listeners) listener();
  }

  /** Cancels one turn; false when it (or everything) is cancelled already. */
  cancelTurn(turn: TurnKey, cancellation: Cancellation): boolean {
    if (this.#all !== undefined || !this.#turns.cancel(turn, cancellation)) return false;
    const listeners = this.#listeners.get(turn);
    this.#listeners.delete(turn);
    for (const listener of listeners ?? []) listener();
    return true;
  }

  /** A call entered the batch (after intake): its turn has an unfinished call. */
  readonly received = (record: CallRecord): void => this.#turns.received(record.turn);

  /** The pool answered a call. */
  answered(record: CallRecord): void {
    this.#turns.answered(record.turn);
  }

  /**
   * The scope of one call's work in a policy stage: it aborts when the stage does (run aborted,
   * unsubscribed) or when the call's turn is cancelled.
   *
   * Unlike an `Abort`, it is a view, not a scope of its own: it owns no state, and its `reason` is read
   * when asked — the stage's once the stage aborted, even if the turn was cancelled first. Its listeners
   * may be called twice (once by each side); the policy chains and approvals settle once regardless.
   */
  scopeFor(stage: AbortScope, record: CallRecord): AbortScope {
    const cancellation = () => this.cancellationOf(record);
    const onTurnCancel = (listener: () => void) => this.#onTurnCancel(record, listener);
    return {
      get aborted() {
        return stage.aborted || cancellation() !== undefined;
      },
      get reason() {
        const cancelled = cancellation();
        return stage.aborted || cancelled === undefined ? stage.reason : cancelledAbort(cancelled);
      },
      onAbort(listener) {
        const unlistenStage = stage.onAbort(listener);
        const unlistenTurn = onTurnCancel(listener);
        return () => {
          unlistenStage();
          unlistenTurn();
        };
      },
    };
  }

  #onTurnCancel(record: CallRecord, listener: () => void): () => void {
    if (this.cancellationOf(record) !== undefined) {
      listener();
      return () => undefined;
    }
    const turn = record.turn;
    let set = this.#listeners.get(turn);
    if (set === undefined) this.#listeners.set(turn, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(turn) === set) this.#listeners.delete(turn);
    };
  }
}
