import { Worker, type Processor, type WorkerOptions } from 'bullmq';
import type { FleetClient } from './fleetRedis.js';
import type { LockWatch } from './lockWatch.js';

/**
 * BullMQ's `Worker` as a fleet runs it: every lock renewal is timed, and what Redis answers goes to the
 * worker's `LockWatch` — the locks it set (from no earlier than the renewal was sent) and those it could
 * not (another worker holds the job, or no one: BullMQ's `lockRenewalFailed`). Its `connection` is the
 * one the renewals go through.
 */
export class FleetWorker extends Worker {
  readonly #locks: LockWatch;

  constructor(queue: string, processor: Processor, options: WorkerOptions & { readonly connection: FleetClient }, locks: LockWatch) {
    super(queue, processor, options);
    this.#locks = locks;
  }

  override async extendJobLocks(jobIds: string[], tokens: string[], duration: number): Promise<string[]> {
    const sentAt = performance.now();
    const failed = await super.extendJobLocks(jobIds, tokens, duration);
    const lost = new Set(failed);
    this.#locks.renewed(
      jobIds.filter((id) => !lost.has(id)),
      sentAt,
    );
    this.#locks.lost(failed);
    return failed;
  }
}

/**
 * Looks for stalled jobs (active, and their lock gone) every `intervalMs` and moves them back to wait, as
 * BullMQ's own check does (the worker is made with `skipStalledCheck`) — but only once `connection` has
 * been up for `lockMs`. After Redis restarted, every worker that holds jobs whose locks lapsed while it
 * was away (persisted locks expire) has that long to record how the jobs that ended meanwhile ended
 * (`LockWatch`), before any worker moves them and their next worker looks for such a record. A dead
 * worker's job is found as before, `lockMs` later at most after a restart. Returns a stop function.
 */
export function checkStalls(worker: Worker, connection: FleetClient, lockMs: number, intervalMs: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    if (connection.status === 'ready' && performance.now() - connection.readyAt >= lockMs) {
      await worker.getBackend().moveStalledJobsToWait().catch(() => undefined); // Redis away: the next round
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  timer = setTimeout(() => void tick(), intervalMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
