import { Queue, QueueEvents } from 'bullmq';
import { CANCEL_MARKER_MS, FleetKeys } from './fleetKeys.js';
import type { FleetConnections, RedisClient } from './fleetRedis.js';
import { completed, JobWatch, type JobOutcome } from './jobWatch.js';
import { WorkerPresence, type UnservedJob } from './workerPresence.js';

/** How many jobs one reconcile script asks Redis about. */
const RECONCILE_BATCH = 500;

/**
 * How each job of a batch ended, in one round trip and O(1) per job — a flat list of pairs: `c` and the
 * return value (completed), `f` and the reason (failed), `p` and '' (still there: waiting, delayed or
 * active), `u` and '' (gone). An outcome its worker recorded beside the job (`outcomeRecord.ts`: its
 * lock lapsed before BullMQ recorded how it ended) comes first, in the same letters. (BullMQ's
 * `getJobState` also finds a waiting job's position in the wait list — O(backlog) per job — and a
 * `getJob` per finished job would be a second round trip: checking thousands of outstanding jobs a
 * second that way is what made a busy agent slow.)
 */
const JOB_STATES = `
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local key = ARGV[1] .. id
  local state, value = 'u', ''
  local recorded = redis.call('GET', ARGV[2] .. id)
  if recorded then
    state, value = string.sub(recorded, 1, 1), string.sub(recorded, 2)
  elseif redis.call('ZSCORE', KEYS[1], id) then
    local returned = redis.call('HGET', key, 'returnvalue')
    if returned then state, value = 'c', returned end
  elseif redis.call('ZSCORE', KEYS[2], id) then
    local reason = redis.call('HGET', key, 'failedReason')
    if reason then state, value = 'f', reason end
  elseif redis.call('EXISTS', key) == 1 then
    state = 'p'
  end
  out[#out + 1] = state
  out[#out + 1] = value
end
return out`;

/**
 * For each job of a queue that has had no live worker for `noWorkerMs` (`WorkerPresence`), in one round
 * trip: takes it out of the wait list (or the paused one), atomically, if it is there — `v`: no worker
 * can start it from now on (a worker takes a job by moving it from that list); searched from the tail,
 * where the oldest jobs are (BullMQ adds at the head). Otherwise says what became of it: `e` it ended
 * (completed, failed, an outcome its worker recorded, or gone), `l` a worker holds its lock, `a` it was
 * started and its lock is gone (its worker was lost) — then `Queue.remove` takes it out, refusing if a
 * worker locked it meanwhile.
 */
const VOID_UNSERVED = `
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local key = ARGV[1] .. id
  local state = 'a'
  if redis.call('LREM', KEYS[1], -1, id) > 0 or redis.call('LREM', KEYS[2], -1, id) > 0 then
    state = 'v'
  elseif redis.call('EXISTS', key) == 0 or redis.call('EXISTS', ARGV[2] .. id) == 1 or redis.call('ZSCORE', KEYS[3], id) or redis.call('ZSCORE', KEYS[4], id) then
    state = 'e'
  elseif redis.call('EXISTS', key .. ':lock') == 1 then
    state = 'l'
  end
  out[#out + 1] = state
end
return out`;

/**
 * The agent's side of one queue: adds jobs, and learns how each one it waits for ends. Completion never
 * depends on events alone — `QueueEvents` reads a capped stream, and a lagging reader loses events —
 * so every job still outstanding is also looked up in job state every `reconcileMs`, and at once when
 * a connection comes back. Whichever learns first settles the job's watch; the rest is ignored.
 */
export class QueueWatcher {
  readonly queue: Queue;
  readonly keys: FleetKeys;
  readonly #events: QueueEvents;
  readonly #watches = new Map<string, JobWatch>();
  /** The queue's workers, from their heartbeats: voids the jobs of a queue no worker serves (any more). */
  readonly presence: WorkerPresence;
  #timer: NodeJS.Timeout | undefined = undefined;
  #reconciling = false;
  #closed = false;

  constructor(
    name: string,
    /** The agent's connections: the queue's is opened here (and `QueueEvents` blocks on a duplicate of it). */
    connections: FleetConnections,
    prefix: string,
    /** For cancel markers, the cancel channel and job lookups. */
    private readonly commands: RedisClient,
    private readonly reconcileMs: number,
    /** How long the queue may have no live worker while a job is waited for before the job is voided. */
    private readonly noWorkerMs: number,
  ) {
    this.keys = new FleetKeys(prefix, name);
    this.presence = new WorkerPresence(commands, this.keys, noWorkerMs, (due) => this.#voidUnserved(due));
    const connection = connections.open();
    this.queue = new Queue(name, { connection, prefix });
    // Read from a little before now rather than from wherever the stream is when the first read is
    // sent ('$'), so the events of jobs added meanwhile are not skipped. (Stream ids are Redis's clock;
    // a skew larger than this only makes those results wait for a reconcile.)
    const lastEventId = `${Date.now() - 5000}-0`;
    this.#events = new QueueEvents(name, { connection, prefix, lastEventId });
    // Reconnects are theirs; what they miss meanwhile, reconcile finds.
    this.queue.on('error', () => undefined);
    this.#events.on('error', () => undefined);
    this.#events.on('completed', ({ jobId, returnvalue }) => this.#settle(jobId, completed(returnvalue)));
    this.#events.on('failed', ({ jobId, failedReason }) => this.#settle(jobId, { kind: 'failed', reason: failedReason }));
  }

  /** Starts watching `id` (before it is added, so no event is missed). */
  watch(id: string): JobWatch {
    let watch = this.#watches.get(id);
    if (watch === undefined) {
      watch = new JobWatch(id);
      this.#watches.set(id, watch);
      void watch.settled.then(() => this.#watches.get(id) === watch && this.#watches.delete(id));
    }
    this.#timer ??= setInterval(() => void this.reconcile(), this.reconcileMs);
    return watch;
  }

  /** Whether the job is in Redis, in any state (BullMQ's job hash: an O(1) `EXISTS`). */
  async exists(id: string): Promise<boolean> {
    return (await this.commands.exists(this.queue.toKey(id))) === 1;
  }

  /** The job's stream grew (a worker said so). */
  itemsAdded(id: string): void {
    this.#watches.get(id)?.changed();
  }

  /** The job reported progress (a worker said so). */
  progressAdded(id: string): void {
    this.#watches.get(id)?.progress?.wake();
  }

  /**
   * Cancels the job: removes it if it still waits (it then never runs, and its watch settles as gone);
   * otherwise — it is active — marks it cancelled and tells the workers, and the one running it aborts
   * its body's signal. Removing first means the worker that runs it took it before the message was
   * sent, so it hears it (a worker subscribes before it takes jobs); the marker is for the rest (see
   * `CancelNotices`).
   */
  async cancel(id: string): Promise<void> {
    // An active job is locked: BullMQ answers 0 (or throws, in some versions) and leaves it alone.
    if ((await this.queue.remove(id).catch(() => 0)) === 1) return this.#settle(id, { kind: 'gone', why: 'it was cancelled before it started' });
    await this.commands.multi().set(this.keys.cancelMarker(id), '1', 'PX', CANCEL_MARKER_MS).publish(this.keys.cancelChannel, id).exec();
  }

  /** The agent's connection came back: what was missed meanwhile is looked up, and the time away is not time without a worker. */
  reconnected(): void {
    this.presence.reconnected();
    void this.reconcile();
  }

  /**
   * Voids the jobs of a queue that has had no live worker for `noWorkerMs` (see `WorkerPresence`),
   * batched: a job no worker started, and a started one whose worker was lost (its lock lapsed), are
   * taken out of Redis and their calls answered; a job that ended is settled from its state; one a
   * worker holds is left alone. Rejects when Redis could not be read (nothing voided then).
   */
  async #voidUnserved(due: readonly UnservedJob[]): Promise<void> {
    const { wait, paused, completed, failed } = this.queue.keys;
    for (let start = 0; start < due.length; start += RECONCILE_BATCH) {
      const batch = due.slice(start, start + RECONCILE_BATCH);
      const states = (await this.commands.eval(VOID_UNSERVED, 4, wait!, paused!, completed!, failed!, this.queue.toKey(''), this.keys.outcomePrefix, ...batch.map(({ watch }) => watch.id))) as string[];
      await Promise.all(batch.map((job, i) => (states[i] === 'v' ? this.#voidUnstarted(job) : states[i] === 'a' ? this.#voidLost(job) : undefined)));
      // Ended since the last look: settled now rather than at the next reconcile. ('l': a worker holds it — one that
      // closes finishes its body, one back from a blocked event loop or a new one's stall check takes it over.)
      const ended = batch.filter((_, i) => states[i] === 'e').map(({ watch }) => watch);
      if (ended.length > 0) await this.reconcile(ended);
    }
  }

  /** A job no worker started, out of the wait list: its call is answered, then the rest of the job is removed. */
  async #voidUnstarted({ watch, unservedMs }: UnservedJob): Promise<void> {
    const { queue, prefix } = this.keys;
    watch.settle({
      kind: 'no_worker',
      queue,
      why:
        `No worker serves queue "${queue}" (prefix "${prefix}"): none sent a heartbeat in the ${Math.round(unservedMs)} ms the job waited (noWorkerMs: ${this.noWorkerMs}), ` +
        `so the job was taken out of the queue before any worker started it; it did not run, and no worker can run it later. ${this.#startOne()}`,
    });
    await this.queue.remove(watch.id).catch(() => 0); // its data and events: nothing can take it any more
  }

  /**
   * A started job whose worker was lost — its lock lapsed, and no worker is left to run BullMQ's stall
   * check — taken out of Redis with BullMQ's own `remove`, which refuses a locked job: a worker that
   * came back, or a new one whose stall check took the job first, keeps it (looked at again next
   * round). Then its call is answered: `outcome_unknown` (its body started and may have taken effect),
   * or `no_worker` when it may run again but nothing is left to run it.
   */
  async #voidLost({ watch, unservedMs, idempotent }: UnservedJob): Promise<void> {
    if ((await this.queue.remove(watch.id).catch(() => 0)) !== 1) return;
    const { queue, prefix } = this.keys;
    const ms = Math.round(unservedMs);
    const why = idempotent
      ? `The worker running the job on queue "${queue}" (prefix "${prefix}") was lost (its lock on the job lapsed), and no worker of queue "${queue}" (prefix "${prefix}") is left to run it again: ` +
        `none sent a heartbeat for ${ms} ms (noWorkerMs: ${this.noWorkerMs}), so the job was taken out of Redis; its body started and may have run in part, and no worker can run it later. ${this.#startOne()}`
      : `the worker running it was lost (its lock on the job lapsed), and no worker of queue "${queue}" (prefix "${prefix}") sent a heartbeat for ${ms} ms (noWorkerMs: ${this.noWorkerMs}), ` +
        'so the job was taken out of Redis; it is not idempotent, so it was not run again; it may or may not have taken effect.';
    watch.settle({ kind: 'worker_lost', queue, why, idempotent });
  }

  /** How to start a worker of the queue, for a `no_worker` message. */
  #startOne(): string {
    const { queue, prefix } = this.keys;
    return `Start one with createToolWorker({ queue: '${queue}', prefix: '${prefix}', connection, secret, tools }) on this Redis, with the agent's secret.`;
  }

  /** Looks every added, unsettled job up in job state (batched), settling those that ended. */
  async reconcile(only?: readonly JobWatch[]): Promise<void> {
    if (this.#closed) return;
    if (only === undefined) {
      if (this.#watches.size === 0) return this.#stopTimer();
      if (this.#reconciling) return; // a slow Redis: one round at a time
      this.#reconciling = true;
    }
    try {
      const watches = (only ?? [...this.#watches.values()]).filter((watch) => watch.added && watch.outcome === undefined);
      for (let start = 0; start < watches.length; start += RECONCILE_BATCH) {
        const batch = watches.slice(start, start + RECONCILE_BATCH);
        const { completed, failed } = this.queue.keys;
        const states = (await this.commands.eval(JOB_STATES, 2, completed!, failed!, this.queue.toKey(''), this.keys.outcomePrefix, ...batch.map((watch) => watch.id))) as string[];
        batch.forEach((watch, i) => this.#settleFromState(watch, states[2 * i]!, states[2 * i + 1]!));
      }
    } catch {
      // Redis is away: the next round (or the reconnect) tries again.
    } finally {
      if (only === undefined) this.#reconciling = false;
    }
  }

  #settleFromState(watch: JobWatch, state: string, value: string): void {
    if (state === 'c') this.#settle(watch.id, completed(value));
    else if (state === 'f') this.#settle(watch.id, { kind: 'failed', reason: value });
    else if (state === 'u') this.#settle(watch.id, { kind: 'gone', why: 'the job is no longer in Redis (removed or expired)' });
  }

  #settle(id: string, outcome: JobOutcome): void {
    this.#watches.get(id)?.settle(outcome);
  }

  #stopTimer(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Closes BullMQ's side of it (the queue's own connection is the agent's to end); every job still waited
   * for settles as gone.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopTimer();
    this.presence.close();
    for (const watch of this.#watches.values()) watch.settle({ kind: 'gone', why: 'remoteTools was closed while it waited for the job' });
    this.#watches.clear();
    await Promise.allSettled([this.queue.close(), this.#events.close()]);
  }
}
