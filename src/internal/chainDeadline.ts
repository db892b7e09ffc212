import type { SchedulerLike, Subscription } from 'rxjs';
import type { WaterfallFailure } from './waterfall.js';

/**
 * Bounds one call's policy chain in time: its `signal` (what the policies see) aborts when the stage's
 * signal does or when `ms` pass, and `race` settles the chain as failed at that moment. A policy that
 * never settles therefore fails closed instead of holding the call (and every barrier behind it)
 * forever. Leaves no timer or listener behind once `race` settled.
 */
export class ChainDeadline {
  private readonly controller = new AbortController();
  private timer: Subscription | undefined;
  private readonly onStageAbort: () => void;

  constructor(
    private readonly stageSignal: AbortSignal,
    private readonly ms: number | undefined,
    private readonly scheduler: SchedulerLike,
  ) {
    this.onStageAbort = () => this.controller.abort(stageSignal.reason);
    if (stageSignal.aborted) this.onStageAbort();
    else stageSignal.addEventListener('abort', this.onStageAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Settles with `chain`, or with a failure blaming the most recent pending policy when time is up. */
  race<T extends { readonly failure: WaterfallFailure | undefined }>(
    chain: Promise<T>,
    pending: ReadonlySet<string>,
    timedOut: (failure: WaterfallFailure) => T,
  ): Promise<T> {
    const { ms } = this;
    const settled =
      ms === undefined
        ? chain
        : new Promise<T>((resolve) => {
            this.timer = this.scheduler.schedule(() => {
              const policy = [...pending].pop() ?? '(chain)';
              const message = `did not decide within ${ms} ms`;
              this.controller.abort(new DOMException(`policy ${policy} ${message}`, 'TimeoutError'));
              resolve(timedOut({ policy, message, cause: undefined }));
            }, ms);
            chain.then(resolve);
          });
    return settled.finally(() => this.dispose());
  }

  private dispose(): void {
    this.timer?.unsubscribe();
    this.stageSignal.removeEventListener('abort', this.onStageAbort);
  }
}
