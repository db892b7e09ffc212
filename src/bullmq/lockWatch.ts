import type { JobReturn } from './outcomeSigner.js';

/** What a job's processor ended with: its signed return, or its failure's reason. */
export type SettledJob = { readonly returned: JobReturn } | { readonly failed: string };

/** Called when a job that ended may have lost its lock before BullMQ recorded how it ended. */
export type RecordOutcome = (jobId: string, outcome: SettledJob, keepMs: number) => void;

/** One job this worker holds, from BullMQ handing it over until BullMQ recorded how it ended. */
export interface HeldJob {
  /** Aborts when the job's lock may have lapsed (or Redis said it is not this worker's) while its processor runs. */
  readonly lapsed: AbortSignal;
  /**
   * Its processor ended, with `outcome` (none: nothing to keep). What to record if the lock lapses before
   * BullMQ records it; nothing, once the lock lapsed while it ran (it is a lost worker's job).
   */
  settled(outcome: SettledJob | undefined, keepMs: number): void;
}

interface Hold {
  /** `performance.now()` by which the lock may lapse: the last set Redis answered, sent then minus `lockMs`. */
  lockedUntil: number;
  timer: NodeJS.Timeout | undefined;
  readonly lapsed: AbortController;
  /** Whether its processor ended; with what to record, if anything. */
  settled: { readonly outcome: SettledJob | undefined; readonly keepMs: number } | undefined;
}

/**
 * What a worker knows of its jobs' locks. BullMQ renews a job's lock while its body runs; a worker that
 * cannot — cut off from Redis with its sockets open (nothing fails, nothing answers), or Redis away for
 * `lockMs` — would keep running the body while the lock lapses and another worker's stall check hands the
 * job on: two bodies at once. BullMQ says so only when a renewal is answered (`lockRenewalFailed`), which
 * a cut-off worker never hears. So the time is kept here, from the lock sets Redis answered: each sets the
 * lock for `lockMs` from no earlier than it was sent — and no earlier than its connection was last ready,
 * for one that waited while Redis was away — so a job whose last answered set was sent `lockMs` ago may
 * have lost its lock, and no worker can have taken it over before (a stall check moves a job only once
 * its lock is gone). Then:
 * - a processor still running has its `lapsed` signal aborted (the body's signal aborts with it), and
 *   the job is left to the stall check, as a lost worker's;
 * - a job that ended while BullMQ had not yet recorded it (a completion stuck behind a lost connection,
 *   which fails once the lock is gone) has its signed outcome recorded (`record`), where the agent and
 *   the job's next worker find it (`outcomeRecord.ts`).
 */
export class LockWatch {
  readonly #held = new Map<string, Hold>();
  /** How many processors run. */
  #running = 0;
  #idle: (() => void) | undefined = undefined;

  constructor(
    private readonly lockMs: number,
    /** `performance.now()` when the connection that sets the locks was last ready. */
    private readonly readyAt: () => number,
    private readonly record: RecordOutcome,
  ) {}

  /**
   * BullMQ handed the job over: its lock was set when it was moved to active, no earlier than
   * `processedOn` (this worker's clock when it asked).
   */
  hold(jobId: string, processedOn: number | undefined): HeldJob {
    const before = this.#held.get(jobId);
    if (before !== undefined) {
      // Handed over again: its lock was lost, so a processor of the job still running here is stopped.
      if (before.settled === undefined) before.lapsed.abort(new DOMException(`the worker lost its lock on job ${jobId}`, 'AbortError'));
      this.#forget(jobId);
    }
    const sentAt = performance.now() - Math.max(0, Date.now() - (processedOn ?? Date.now()));
    const hold: Hold = { lockedUntil: this.#lockedUntil(sentAt), timer: undefined, lapsed: new AbortController(), settled: undefined };
    this.#held.set(jobId, hold);
    this.#running++;
    this.#arm(jobId, hold);
    return {
      lapsed: hold.lapsed.signal,
      settled: (outcome, keepMs) => {
        if (hold.settled !== undefined) return;
        hold.settled = { outcome, keepMs };
        this.#ended();
        if (hold.lapsed.signal.aborted && this.#held.get(jobId) === hold) this.#forget(jobId);
      },
    };
  }

  /** Redis answered a set of these jobs' locks, sent at `sentAt` (`performance.now()`). */
  renewed(jobIds: readonly string[], sentAt: number): void {
    const since = this.#lockedUntil(sentAt);
    for (const jobId of jobIds) {
      const hold = this.#held.get(jobId);
      if (hold === undefined || hold.lapsed.signal.aborted || since <= hold.lockedUntil) continue;
      hold.lockedUntil = since;
      this.#arm(jobId, hold);
    }
  }

  /** Redis said these jobs' locks are not this worker's any more (another holds them, or none). */
  lost(jobIds: readonly string[]): void {
    for (const jobId of jobIds) {
      const hold = this.#held.get(jobId);
      if (hold !== undefined) this.#lapse(jobId, hold);
    }
  }

  /** BullMQ recorded how the job ended (its `completed` or `failed` event). */
  finished(jobId: string): void {
    if (this.#held.get(jobId)?.settled !== undefined) this.#forget(jobId);
  }

  /** Resolves once no processor runs. */
  idle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const before = this.#idle;
      this.#idle = () => (before?.(), resolve());
    });
  }

  /** Forgets every job (the worker closed): no timer is left. */
  clear(): void {
    for (const jobId of [...this.#held.keys()]) this.#forget(jobId);
  }

  /** Until when a lock set by a command sent at `sentAt` holds at least (not before the connection was ready). */
  #lockedUntil(sentAt: number): number {
    return Math.max(sentAt, this.readyAt()) + this.lockMs;
  }

  #ended(): void {
    if (--this.#running > 0) return;
    const idle = this.#idle;
    this.#idle = undefined;
    idle?.();
  }

  #forget(jobId: string): void {
    const hold = this.#held.get(jobId);
    if (hold === undefined) return;
    clearTimeout(hold.timer);
    this.#held.delete(jobId);
  }

  #arm(jobId: string, hold: Hold): void {
    clearTimeout(hold.timer);
    hold.timer = setTimeout(() => this.#lapse(jobId, hold), Math.max(0, hold.lockedUntil - performance.now()));
  }

  #lapse(jobId: string, hold: Hold): void {
    if (this.#held.get(jobId) !== hold) return;
    clearTimeout(hold.timer);
    if (hold.settled === undefined) {
      hold.lapsed.abort(new DOMException(`the worker lost its lock on job ${jobId}`, 'AbortError'));
      return; // forgotten once the processor ends (`settled`)
    }
    this.#forget(jobId);
    if (hold.settled.outcome !== undefined) this.record(jobId, hold.settled.outcome, hold.settled.keepMs);
  }
}
