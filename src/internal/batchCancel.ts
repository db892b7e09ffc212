import type { Cancellation } from './callRecord.js';

/**
 * The cancellation of one batch (one subscription), shared by the stages: the execute stage decides it
 * (cancel-rest, `ctx.cancelRest()`, the run's signal), and the policy stages before it see it, so a call
 * still in its policy chain or awaiting approval is cancelled at once instead of waiting for an answer
 * that no longer matters.
 */
export class BatchCancel {
  readonly #controller = new AbortController();
  /** Why the batch was cancelled; set once. */
  cancellation: Cancellation | undefined = undefined;

  /** Aborts when the batch is cancelled. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  cancel(cancellation: Cancellation): void {
    if (this.cancellation !== undefined) return;
    this.cancellation = cancellation;
    this.#controller.abort(new DOMException(`cancelled (${cancellation.reason})`, 'AbortError'));
  }
}
