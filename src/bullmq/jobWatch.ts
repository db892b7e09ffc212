import type { ProgressRelay } from './remoteProgress.js';

/** How a job ended, as the agent learns it (from an event or from job state). */
export type JobOutcome =
  /** `result`: BullMQ's return value, parsed once; nothing is used before it is verified (`OutcomeSigner`). */
  | { readonly kind: 'completed'; readonly result: unknown }
  | { readonly kind: 'failed'; readonly reason: string }
  /** The job is not in Redis (removed before it ran, expired, lost) or the agent closed. */
  | { readonly kind: 'gone'; readonly why: string }
  /** No worker of `queue` was alive while it waited: the agent took it out of the queue before any worker started it. */
  | { readonly kind: 'no_worker'; readonly queue: string; readonly why: string }
  /**
   * The worker running it was lost (its lock lapsed) and no worker of `queue` was left alive for
   * `noWorkerMs`: the agent took the started job out of Redis. Its call is `outcome_unknown`, or —
   * `idempotent`: it could run again, but nothing is left to run it — `no_worker`.
   */
  | { readonly kind: 'worker_lost'; readonly queue: string; readonly why: string; readonly idempotent: boolean };

/**
 * One job an agent waits for: settled once, by whichever source learns its outcome first (an event,
 * a reconcile from job state, a cancel that removed it); woken on every notice that its stream grew.
 */
export class JobWatch {
  /** `queue.add` returned: from now on, a job missing from Redis is gone, not yet to come. */
  added = false;
  outcome: JobOutcome | undefined = undefined;
  /** Where the job's progress reports go, once the call that waits for it listens. */
  progress: ProgressRelay | undefined = undefined;
  readonly settled: Promise<JobOutcome>;
  #resolve!: (outcome: JobOutcome) => void;
  /** Woken on the next change (items or outcome). */
  #change: { promise: Promise<void>; resolve: () => void } | undefined = undefined;

  constructor(readonly id: string) {
    this.settled = new Promise((resolve) => (this.#resolve = resolve));
  }

  settle(outcome: JobOutcome): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    this.#resolve(outcome);
    this.changed();
  }

  /** The job's stream has new items (or its outcome is known). */
  changed(): void {
    const change = this.#change;
    this.#change = undefined;
    change?.resolve();
  }

  /** Resolves on the next change; at once when the outcome is known. */
  nextChange(): Promise<void> {
    if (this.outcome !== undefined) return Promise.resolve();
    if (this.#change === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#change = { promise, resolve };
    }
    return this.#change.promise;
  }
}

/** A completed job's outcome: BullMQ's return value (JSON text, or already parsed) read once, here. */
export function completed(returnvalue: unknown): JobOutcome {
  let result = returnvalue;
  if (typeof result === 'string') {
    try {
      result = JSON.parse(result);
    } catch {
      result = undefined;
    }
  }
  return { kind: 'completed', result };
}
