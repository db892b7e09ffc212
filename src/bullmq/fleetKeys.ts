/**
 * The Redis names toolstream adds beside BullMQ's own keys of a queue (`<prefix>:<queue>:…`), so a
 * fleet's agents and workers agree on them and `prefix` keeps fleets apart.
 */
export class FleetKeys {
  constructor(
    readonly prefix: string,
    readonly queue: string,
  ) {}

  private get base(): string {
    return `${this.prefix}:${this.queue}:toolstream`;
  }

  /** The channel every worker of the queue listens on: a message is the id of a job to cancel. */
  get cancelChannel(): string {
    return `${this.base}:cancel`;
  }

  /** A short-lived marker: the job was cancelled; a worker checks it just before starting the body. */
  cancelMarker(jobId: string): string {
    return `${this.base}:cancelled:${jobId}`;
  }

  /** The channel a worker tells the agents on that a job's stream has new items (the message: its id), or new progress (`p:<id>`). */
  get itemsChannel(): string {
    return `${this.base}:items`;
  }

  /** The Redis stream of a job's progress reports (`ctx.progress` on the worker), kept as long as the job. */
  progress(jobId: string): string {
    return `${this.base}:progress:${jobId}`;
  }

  /** The Redis stream of a job's output items, in order, kept as long as the job. */
  items(jobId: string): string {
    return `${this.base}:items:${jobId}`;
  }
}

/** How long a cancel marker lives: long enough for any job that was waiting to be picked up and checked. */
export const CANCEL_MARKER_MS = 60_000;
