import type { SchedulerLike, Unsubscribable } from 'rxjs';
import { Abort } from '../../stream/abortScope.js';
import type { AbortScope } from '../../types/abortScope.js';
import { Deadlines } from '../pool/deadlines.js';
import type { MaybePromise, WaterfallFailure, WaterfallFold, WaterfallOutcome } from './waterfall.js';

/** How a chain the stage stopped (run ended, unsubscribed) failed: `policy "…" was stopped: …`. */
const STOPPED = 'was stopped: the run ended';

/**
 * Bounds one call's policy chain: its `signal` (what the policies see) aborts when the stage stops
 * (run aborted, unsubscribed) or when `ms` pass, and `race` then settles the chain as failed at once. A
 * policy that never settles therefore fails closed instead of holding the call (and every barrier
 * behind it) forever. Once `race` settled, no timer or listener is left.
 */
export class ChainDeadline {
  /** Its signal is created when a policy first reads `ctx.signal` (most never look); the first stop's reason wins. */
  private readonly stopped = new Abort();
  private timer: Unsubscribable | undefined = undefined;
  private readonly unlisten: () => void;
  /** Settles the race early; set while it runs. */
  private settleEarly: ((failure: WaterfallFailure) => void) | undefined = undefined;
  /** The positions (in `names`) of the chain's policies still running, most recent last: the chain keeps it. */
  readonly pending = new Set<number>();

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
   * Settles with `chain` (run with `pending` as its pending set), or when stopped with the decision
   * `folder` has folded so far and a failure blaming the most recent pending policy. A chain that
   * already decided (a value, not a promise) is its outcome at once, as a value.
   */
  race<D>(chain: MaybePromise<WaterfallOutcome<D>>, folder: Pick<WaterfallFold<D>, 'current'>): MaybePromise<WaterfallOutcome<D>> {
    const failed = (failure: WaterfallFailure): WaterfallOutcome<D> => ({ decision: folder.current(), failure });
    if (!(chain instanceof Promise)) {
      // The chain decided at once: nothing to race, no timer armed — unless the stage had already stopped.
      const outcome = !this.stopped.aborted ? chain : failed({ policy: this.blame(), message: STOPPED, cause: undefined });
      this.dispose();
      return outcome;
    }
    return new Promise<WaterfallOutcome<D>>((resolve) => {
      this.settleEarly = (failure) => resolve(failed(failure));
      if (this.stopped.aborted) this.stop(STOPPED, this.stopped.reason);
      else if (this.ms !== undefined) this.timer = this.timers.add(this, this.ms);
      chain.then(resolve, (error: unknown) => resolve(failed({ policy: this.blame(), message: 'failed', cause: error })));
    }).finally(() => this.dispose());
  }

  /** The chain's time is up. */
  timedOut(): void {
    const ms = this.ms!;
    this.timer = undefined;
    this.stop(`did not decide within ${ms} ms`, new DOMException(`no decision within ${ms} ms`, 'TimeoutError'));
  }

  private stop(message: string, reason: unknown): void {
    this.stopped.abort(reason); // a later stop (a timeout after the stage stopped) keeps the first reason
    this.settleEarly?.({ policy: this.blame(), message, cause: undefined });
  }

  private blame(): string {
    const last = [...this.pending].pop();
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
