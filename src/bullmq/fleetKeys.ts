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

  /**
   * A job's outcome as its worker recorded it beside BullMQ's job, when its lock may have lapsed before
   * BullMQ recorded how it ended (see `LockWatch`): the agent's job lookup and the job's next worker read
   * it first. Kept as long as the job.
   */
  outcome(jobId: string): string {
    return this.outcomePrefix + jobId;
  }

  /** What every outcome record's key starts with (the job id follows): for the agent's lookup script. */
  get outcomePrefix(): string {
    return `${this.base}:outcome:`;
  }

  /**
   * The ids of the queue's workers that sent a heartbeat lately (a set, expiring with the last of them):
   * the index of their heartbeat keys, so an agent reads them without `SCAN` or `CLIENT LIST`.
   */
  get workers(): string {
    return `${this.base}:workers`;
  }

  /** A worker's heartbeat: set with a time to live while the worker takes jobs, deleted when it closes. */
  worker(id: string): string {
    return this.workerPrefix + id;
  }

  /** What every heartbeat key starts with (the worker's id follows): for the agent's presence script. */
  get workerPrefix(): string {
    return `${this.base}:worker:`;
  }

  /**
   * A call's run record: set (if absent) by the worker that starts a non-idempotent body for attempt
   * `attempt` of the call whose idempotency key is `key`; its value is that job's id. A job that finds
   * it set does not run (the body already ran for the call). Keys have no `:` (`tsk-` base64url).
   */
  runRecord(key: string, attempt: number): string {
    return `${this.base}:ran:${key}:${attempt}`;
  }
}

/**
 * How long a run record outlives its job's signed expiry: the clocks of the worker that takes it and of
 * one that could still start a copy of the job may differ by this much.
 */
export const RUN_RECORD_SKEW_MS = 5 * 60_000;

/** How long a cancel marker lives: long enough for any job that was waiting to be picked up and checked. */
export const CANCEL_MARKER_MS = 60_000;
