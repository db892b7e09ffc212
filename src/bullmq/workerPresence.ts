import type { RedisClient } from './fleetRedis.js';
import type { FleetKeys } from './fleetKeys.js';
import type { JobWatch } from './jobWatch.js';
import { liveWorkers } from './workerHeartbeat.js';

/**
 * One queue's workers as an agent sees them (their heartbeats, `workerHeartbeat.ts`), and the jobs it
 * waits for there. A job is voided — taken out of the queue, so that no worker can start it, and its call
 * answered `no_worker` — once the queue has had no live worker for `noWorkerMs` while the job waited:
 * a queue whose workers are all busy has live workers, so its jobs wait as long as they must.
 *
 * Cheap while the fleet is alive: a heartbeat read says for how long at least a worker stays alive, and
 * nothing is read again before then. With no worker, it reads every `noWorkerMs / 5` (50 ms to 1 s),
 * and only while it waits for jobs. A read that fails (Redis away) voids nothing.
 */
export class WorkerPresence {
  /** `performance.now()` until which a worker is known alive (a heartbeat's time to live, when read). */
  #servedUntil = -Infinity;
  /** The jobs waited for (added, not settled), with when they were added (`performance.now()`). */
  readonly #waiting = new Map<JobWatch, number>();
  #timer: NodeJS.Timeout | undefined = undefined;
  #checking = false;

  constructor(
    private readonly commands: RedisClient,
    private readonly keys: FleetKeys,
    private readonly noWorkerMs: number,
    /**
     * Takes the job out of the queue if no worker started it, and settles its watch `no_worker`; a
     * job a worker took (or that ended) is left alone.
     */
    private readonly voidJob: (watch: JobWatch, waitedMs: number) => Promise<void>,
  ) {}

  /** How many workers of the queue are alive now. */
  async count(): Promise<number> {
    const sentAt = performance.now();
    const { count, aliveForMs } = await liveWorkers(this.commands, this.keys);
    if (count > 0) this.#servedUntil = Math.max(this.#servedUntil, sentAt + aliveForMs);
    return count;
  }

  /** Watches over an added job until it settles (nothing, with `noWorkerMs: Infinity`). */
  track(watch: JobWatch): void {
    if (this.noWorkerMs === Infinity || watch.outcome !== undefined) return;
    this.#waiting.set(watch, performance.now());
    void watch.settled.then(() => this.#waiting.delete(watch));
    this.#timer ??= setInterval(() => void this.#check(), Math.min(1000, Math.max(50, this.noWorkerMs / 5)));
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#waiting.clear();
  }

  async #check(): Promise<void> {
    if (this.#waiting.size === 0) return this.close();
    if (this.#checking || performance.now() < this.#servedUntil) return;
    this.#checking = true;
    try {
      if ((await this.count()) > 0) return;
      const now = performance.now();
      const due: [JobWatch, number][] = [];
      for (const [watch, addedAt] of this.#waiting) {
        const waited = now - Math.max(addedAt, this.#servedUntil);
        if (waited >= this.noWorkerMs) due.push([watch, waited]);
      }
      // Voided, or found started by a worker: not a candidate again. (One that failed is tried next round.)
      await Promise.all(due.map(([watch, waited]) => this.voidJob(watch, waited).then(() => this.#waiting.delete(watch), () => undefined)));
    } catch {
      // Redis away: nothing is voided; the next round reads again.
    } finally {
      this.#checking = false;
    }
  }
}
