import type { RedisClient } from './fleetRedis.js';
import type { FleetKeys } from './fleetKeys.js';
import type { JobWatch } from './jobWatch.js';
import { liveWorkers } from './workerHeartbeat.js';

/** A job the agent waits for on a queue that has had no live worker for `noWorkerMs` or longer. */
export interface UnservedJob {
  readonly watch: JobWatch;
  /** How long the queue has had no live worker while the agent waited for the job (ms). */
  readonly unservedMs: number;
  /** Whether the job's call may run again (its contract is `idempotent`). */
  readonly idempotent: boolean;
}

/**
 * One queue's workers as an agent sees them (their heartbeats, `workerHeartbeat.ts`), and the jobs it
 * waits for there. Once the queue has had no live worker for `noWorkerMs` while a job was waited for,
 * the job is handed to `voidJobs`, round after round until it settles: there it is taken out of Redis
 * — so that no worker can run it — and its call answered, whether it still waits (no worker started
 * it) or a worker took it and was lost (its lock lapsed as well); a job whose lock is still held (a
 * worker that closes finishes its bodies first) is left for the next round. A queue whose workers are
 * all busy has live workers, so its jobs wait as long as they must.
 *
 * Cheap while the fleet is alive: a heartbeat read says for how long at least a worker stays alive, and
 * nothing is read again before then. With no worker, it reads every `noWorkerMs / 5` (50 ms to 1 s),
 * and only while it waits for jobs. A read that fails (Redis away) voids nothing, and time away from
 * Redis is not time without a worker: after a reconnect, `noWorkerMs` counts from then (workers that
 * were cut off too get that long to send a heartbeat again).
 */
export class WorkerPresence {
  /** `performance.now()` until which a worker is known alive (a heartbeat's time to live, when read). */
  #servedUntil = -Infinity;
  /** `performance.now()` of the last reconnect of the agent's connection (see {@link reconnected}). */
  #connectedAt = -Infinity;
  /** The jobs waited for (added, not settled): when they were added (`performance.now()`), and whether their calls may run again. */
  readonly #tracked = new Map<JobWatch, { readonly addedAt: number; readonly idempotent: boolean }>();
  #timer: NodeJS.Timeout | undefined = undefined;
  #checking = false;

  constructor(
    private readonly commands: RedisClient,
    private readonly keys: FleetKeys,
    private readonly noWorkerMs: number,
    /**
     * Takes each job out of Redis unless a worker holds it, and settles its watch; a job that ended
     * is settled from its state, and one a worker holds is left alone (it is handed over again next
     * round while it stays unsettled). Rejects when Redis could not be read.
     */
    private readonly voidJobs: (due: readonly UnservedJob[]) => Promise<void>,
  ) {}

  /** How many workers of the queue are alive now. */
  async count(): Promise<number> {
    const sentAt = performance.now();
    const { count, aliveForMs } = await liveWorkers(this.commands, this.keys);
    if (count > 0) this.#servedUntil = Math.max(this.#servedUntil, sentAt + aliveForMs);
    return count;
  }

  /** Watches over an added job until it settles (nothing, with `noWorkerMs: Infinity`). */
  track(watch: JobWatch, idempotent: boolean): void {
    if (this.noWorkerMs === Infinity || watch.outcome !== undefined) return;
    this.#tracked.set(watch, { addedAt: performance.now(), idempotent });
    void watch.settled.then(() => this.#tracked.delete(watch));
    this.#timer ??= setInterval(() => void this.#check(), Math.min(1000, Math.max(50, this.noWorkerMs / 5)));
  }

  /** The agent's connection came back: the time it was away is not counted as time without a worker. */
  reconnected(): void {
    this.#connectedAt = performance.now();
  }

  close(): void {
    this.#stopTimer();
    this.#tracked.clear();
  }

  #stopTimer(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #check(): Promise<void> {
    if (this.#tracked.size === 0) return this.#stopTimer();
    if (this.#checking || performance.now() < this.#servedUntil) return;
    this.#checking = true;
    try {
      if ((await this.count()) > 0) return;
      const now = performance.now();
      const due: UnservedJob[] = [];
      for (const [watch, { addedAt, idempotent }] of this.#tracked) {
        const unservedMs = now - Math.max(addedAt, this.#servedUntil, this.#connectedAt);
        if (unservedMs >= this.noWorkerMs) due.push({ watch, unservedMs, idempotent });
      }
      if (due.length > 0) await this.voidJobs(due); // each stays tracked until it settles
    } catch {
      // Redis away: nothing is voided; the next round reads again.
    } finally {
      this.#checking = false;
    }
  }
}
