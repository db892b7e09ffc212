import type { RedisClient } from './fleetRedis.js';
import { CANCEL_MARKER_MS, type FleetKeys } from './fleetKeys.js';

/**
 * What a worker knows of cancels, without asking Redis for each job. An agent cancels a job it could
 * not remove (it was active already) by setting its marker and publishing its id; the worker that runs
 * it has been subscribed since before it took its first job, so it hears every such cancel:
 * - heard while the body runs: `worker.cancelJob` aborts its signal (`onCancel`);
 * - heard in the moment between BullMQ activating the job and the body starting: `heard(id)` is true
 *   when the runner checks, just before it starts the body.
 * Two cases can miss the message, and both fall back to the marker in Redis: a job started again after
 * its first worker died (the cancel may predate this worker's subscription), and jobs running while the
 * subscription was down (checked when it is back).
 */
export class CancelNotices {
  /** Cancels heard, by job id, with when: kept as long as a marker lives. */
  readonly #heard = new Map<string, number>();
  /** The jobs whose bodies run here, by id: what a reconnect checks. */
  readonly #running = new Set<string>();

  constructor(
    private readonly keys: FleetKeys,
    private readonly commands: RedisClient,
    private readonly onCancel: (jobId: string) => void,
  ) {}

  /** A cancel arrived on the channel. */
  hear(jobId: string): void {
    const now = Date.now();
    this.#heard.set(jobId, now);
    for (const [id, at] of this.#heard) {
      if (now - at < CANCEL_MARKER_MS) break; // insertion order is time order
      this.#heard.delete(id);
    }
    this.onCancel(jobId);
  }

  /** Whether the job was cancelled, checked just before its body starts (after BullMQ registered its signal). */
  async cancelled(jobId: string, startedBefore: boolean): Promise<boolean> {
    if (this.#heard.has(jobId)) return true;
    return startedBefore && (await this.#marked([jobId])).length > 0;
  }

  /** The subscription is back after a gap: cancels sent meanwhile are found by their markers. */
  async resubscribed(): Promise<void> {
    for (const jobId of await this.#marked([...this.#running])) this.hear(jobId);
  }

  running(jobId: string): () => void {
    this.#running.add(jobId);
    return () => this.#running.delete(jobId);
  }

  async #marked(jobIds: readonly string[]): Promise<string[]> {
    if (jobIds.length === 0) return [];
    const found = await this.commands.exists(...jobIds.map((id) => this.keys.cancelMarker(id))).catch(() => 0);
    if (found === 0) return [];
    if (jobIds.length === 1) return [...jobIds];
    const each = await Promise.all(jobIds.map((id) => this.commands.exists(this.keys.cancelMarker(id))));
    return jobIds.filter((_, i) => each[i] === 1);
  }
}
