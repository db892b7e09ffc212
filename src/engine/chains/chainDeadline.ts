import type { SchedulerLike, Unsubscribable } from 'rxjs';
import { Abort } from '../../stream/abortScope.js';
import type { AbortScope } from '../../types/abortScope.js';
import { Later, type MaybeLater } from '../../util/later.js';
import { Deadlines } from '../pool/deadlines.js';
import type { PendingAnswers, WaterfallFailure, WaterfallFold, WaterfallOutcome } from './waterfall.js';

/** How a chain the stage stopped (run ended, unsubscribed) failed: `policy "…" was stopped: …`. */
const STOPPED = 'was stopped: the run ended';

/**
 * Bounds one call's chain: when the stage stops (run aborted, unsubscribed) or `ms` pass (on the
 * stage's scheduler: virtual time too), `race` cancels every answer still pending (unsubscribes the
 * streams, most recent first; a promise's late answer is ignored) and settles the chain as failed at
 * once, and then its `signal` (what the members see) aborts. A member that never answers
 * therefore fails closed instead of holding the call (and every barrier behind it) forever. Once
 * `race` settled, no timer, listener or subscription is left.
 */
export class ChainDeadline {
  /** Its signal is created when a policy first reads `ctx.signal` (most never look); the first stop's reason wins. */
  private readonly stopped = new Abort();
  private timer: Unsubscribable | undefined = undefined;
  private readonly unlisten: () => void;
  /** Settles the race early; set while it runs. */
  private settleEarly: ((failure: WaterfallFailure) => void) | undefined = undefined;
  /** The chain's members still answering, by position (in `names`), most recent last: the chain keeps it. */
  readonly pending: PendingAnswers = new Map();

  constructor(
    scope: AbortScope,
    /** The chain's policy names (two policies may share one), to blame the most recent pending one. */
    private readonly names: readonly string[],
    private readonly ms: number | undefined,
    /** The stage's timers (see {@link chainTimers}): one scheduler timer for all its chains. */
    private readonly timers: Deadlines<ChainDeadline>,
  ) {
    this.unlisten = scope.onAbort(() => this.stop(STOPPED, scope.reason));
  }

  get signal(): AbortSignal {
    return this.stopped.signal;
  }

  /**
   * Settles with `chain` (run with `pending` as its pending map), or when stopped with the decision
   * `folder` has folded so far and a failure blaming the most recent pending member. A chain that
   * already decided (a value, not a `Later`) is its outcome at once, as a value: nothing is armed.
   */
  race<D>(chain: MaybeLater<WaterfallOutcome<D>>, folder: Pick<WaterfallFold<D>, 'current'>): MaybeLater<WaterfallOutcome<D>> {
    const failed = (failure: WaterfallFailure): WaterfallOutcome<D> => ({ decision: folder.current(), failure });
    if (!(chain instanceof Later)) {
      // The chain decided at once: nothing to race, no timer armed — unless the stage had already stopped.
      const outcome = !this.stopped.aborted ? chain : failed({ policy: this.blame(), message: STOPPED, cause: undefined });
      this.dispose();
      return outcome;
    }
    const raced = new Later<WaterfallOutcome<D>>();
    const settle = (outcome: WaterfallOutcome<D>) => {
      if (raced.settled) return;
      this.dispose();
      raced.resolve(outcome);
    };
    this.settleEarly = (failure) => {
      this.cancelPending();
      settle(failed(failure));
    };
    if (this.stopped.aborted) {
      this.stop(STOPPED, this.stopped.reason);
      return raced;
    }
    chain.then(settle, (error: unknown) => settle(failed({ policy: this.blame(), message: 'failed', cause: error })));
    if (!raced.settled && this.ms !== undefined) this.timer = this.timers.add(this, this.ms);
    return raced;
  }

  /** The chain's time is up. */
  timedOut(): void {
    const ms = this.ms!;
    this.timer = undefined;
    this.stop(`did not decide within ${ms} ms`, new DOMException(`no decision within ${ms} ms`, 'TimeoutError'));
  }

  private stop(message: string, reason: unknown): void {
    // Settled first: a member that answers its signal's abort synchronously (a stream erroring on it)
    // must not turn "did not decide within …" into its own failure.
    this.settleEarly?.({ policy: this.blame(), message, cause: undefined });
    this.stopped.abort(reason); // a later stop (a timeout after the stage stopped) keeps the first reason
  }

  /** Stops waiting for every pending answer, most recent first: their streams are unsubscribed now. */
  private cancelPending(): void {
    const answers = [...this.pending.values()];
    for (let i = answers.length - 1; i >= 0; i--) answers[i]?.cancel();
  }

  private blame(): string {
    const last = [...this.pending.keys()].pop();
    return last === undefined ? '(chain)' : (this.names[last] ?? '(chain)');
  }

  private dispose(): void {
    this.settleEarly = undefined;
    this.timer?.unsubscribe();
    this.timer = undefined;
    this.unlisten();
  }
}

/**
 * The timers of a policy stage's chains, one per subscription: a chain per call, each with the same
 * `policyTimeoutMs`, share one scheduler timer (see `Deadlines`) instead of arming one each.
 */
export function chainTimers(scheduler: SchedulerLike): Deadlines<ChainDeadline> {
  return new Deadlines<ChainDeadline>(scheduler, (chain) => chain.timedOut());
}
