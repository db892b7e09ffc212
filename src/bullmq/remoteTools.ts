import { randomUUID } from 'node:crypto';
import type { ConnectionOptions } from 'bullmq';
import { argsHash } from '../durable/canonical.js';
import { durableCallOf, markReattaching } from '../durable/reattach.js';
import { attemptOf } from '../engine/records/callSlots.js';
import { outcome } from '../util/outcome.js';
import { isPositiveDuration } from '../util/validate.js';
import { implementTool, isToolContract, type ToolContract } from '../tool/toolContract.js';
import type { AnyTool, ToolContext } from '../types/tool.js';
import { checkConnection, checkName, checkSecret, checkSlots, DEFAULT_PREFIX, failer } from './fleetOptions.js';
import { FleetKeys } from './fleetKeys.js';
import { dispatchPayload, type DispatchTerms } from './dispatchPayload.js';
import { boundedClose, closeRedis, DEFAULT_CONNECT_TIMEOUT_MS, FleetConnections, type RedisClient } from './fleetRedis.js';
import { warnFleet, type FleetWarning } from './fleetWarning.js';
import { durableJobId } from './jobPayload.js';
import type { JobWatch } from './jobWatch.js';
import { OutcomeSigner } from './outcomeSigner.js';
import { QueueWatcher } from './queueWatcher.js';
import { readItems } from './remoteItems.js';
import { settledReturn, unverified } from './remoteOutcome.js';
import { ProgressRelay, progressNoticeOf } from './remoteProgress.js';
import { RemoteToolError } from './remoteToolError.js';
import { liveWorkers } from './workerHeartbeat.js';

/** Options of {@link remoteTools}. */
export interface RemoteToolsOptions {
  /**
   * BullMQ's connection: ioredis options (`{ host, port }`, `{ url }`), an ioredis `Redis`, or an ioredis
   * `Cluster` (a Redis Cluster: then `prefix`, or each queue name, needs a hash tag, e.g. `'{toolstream}'`).
   * A client given is copied — same address or startup nodes, same options — for each connection, and
   * never closed by us.
   */
  readonly connection: ConnectionOptions;
  /** The queue every job goes to, or one per contract (one queue per limited resource, see `setFleetLimits`). */
  readonly queue: string | ((contract: ToolContract) => string);
  /** The secret the workers share: at least 32 bytes. Every job is signed with it. */
  readonly secret: string | Uint8Array;
  /**
   * BullMQ's key prefix; agents and workers of a fleet use the same. On a Redis Cluster it needs a hash
   * tag (`'{toolstream}'`: every key of the fleet in one slot) unless each queue name has one
   * (`'{browsers}'`: a queue's keys in one slot, queues spread over the masters); without, `remoteTools`
   * throws a `ConfigError` saying so. @default 'toolstream'
   */
  readonly prefix?: string;
  /**
   * How often every outstanding job is checked against its job state, besides the events: the longest
   * a result whose event was lost waits (and, results being in model order, the calls after it). One
   * round costs O(1) per outstanding job in one script per 500. @default 250
   */
  readonly reconcileMs?: number;
  /**
   * How long finished jobs (with their streamed items and progress) stay in Redis. A durable turn resumed
   * within it re-attaches to the jobs it started and takes their results; resumed later, a started call
   * whose job is gone is `outcome_unknown` unless its contract is idempotent (then it runs again). What
   * it costs is Redis memory: every finished job's arguments, result and items, for this long.
   * @default 3_600_000 (1 h)
   */
  readonly keepJobsMs?: number;
  /**
   * The signed expiry of a job whose contract has no `timeoutMs` (one with a timeout expires at its
   * deadline): a job not started by then is refused by every worker (`timeout`), so a copy of it
   * replayed later (re-added, retried by hand) can never run. Choose it above the longest a job may
   * wait in the queue (a fleet limit, a backlog, workers down). It also bounds how long a worker's run
   * record of a non-idempotent call lives in Redis (this, plus a margin for clock skew).
   * @default 3_600_000 (1 h)
   */
  readonly jobExpiryMs?: number;
  /**
   * How long a queue may have no live worker while a job is waited for before its call fails fast: the
   * agent takes the job out of Redis (no worker can run it after that) and answers the call. A job that
   * waits is answered with a `tool_error` whose cause is a {@link RemoteToolError} `no_worker` naming the
   * queue. A job a worker started, whose worker was lost (killed: no heartbeat, and its lock on the job
   * lapsed) with no other worker left to run BullMQ's stall check, is answered once the lock lapsed too:
   * `outcome_unknown` (its body may have taken effect), or `no_worker` for an `idempotent` tool (nothing
   * is left to run it again) — rather than at its `timeoutMs`. Workers send a heartbeat while they run,
   * busy or idle, so a fleet that is only busy never fails this way: its calls wait as long as they must
   * (bounded by their `timeoutMs`); and a worker that comes back in time (or any other) takes a lost
   * worker's job over as ever. Choose it above the longest your fleet may be without any worker and
   * still be expected to serve (a restart of every worker at once); `Infinity` waits for a worker as
   * long as the call may wait.
   * @default 5000
   */
  readonly noWorkerMs?: number;
  /**
   * How long the first connection to Redis may take: none up by then (no server there, a wrong address)
   * and every call waiting fails with a {@link RemoteToolError} `redis_unreachable` naming the address,
   * and no connection is left retrying (the next call tries again). Once Redis was reached, an outage is
   * waited out, as ever.
   * @default 5000
   */
  readonly connectTimeoutMs?: number;
  /**
   * Told what is wrong with the fleet at start-up — `remoteTools` checks every queue of its contracts
   * once, at once: no worker sends a heartbeat on a queue, or Redis cannot be reached. Nothing is
   * thrown; the calls fail fast with the same code if it stays so.
   * @default a process warning (`process.emitWarning`, type `ToolstreamFleetWarning`)
   */
  readonly onWarning?: (warning: FleetWarning) => void;
}

/** The tools {@link remoteTools} made, and the connections behind them. */
export interface RemoteTools {
  /** One pipeline tool per contract, in their order. */
  readonly tools: readonly AnyTool[];
  /**
   * How many workers each queue of the contracts has now, by queue name, from their heartbeats — busy
   * or idle (a health check). Rejects with a {@link RemoteToolError} `redis_unreachable` when Redis
   * cannot be reached within `connectTimeoutMs`.
   */
  workers(): Promise<Readonly<Record<string, number>>>;
  /**
   * Closes every connection it opened, within a few seconds whatever Redis does (a connection that
   * cannot close politely — Redis away, restarting, or out of reach — is disconnected); calls still
   * waiting fail (`job_lost`). Idempotent.
   */
  close(): Promise<void>;
}

const DEFAULT_RECONCILE_MS = 250;
const DEFAULT_KEEP_JOBS_MS = 60 * 60 * 1000;
const DEFAULT_JOB_EXPIRY_MS = 60 * 60 * 1000;
const DEFAULT_NO_WORKER_MS = 5000;
/** How long `close()` lets its connections close politely before it ends them. */
const CLOSE_MS = 2000;

/**
 * Pipeline tools whose bodies run as BullMQ jobs on a worker fleet (`createToolWorker`). They are
 * ordinary tools: intake, policies, the guard and approvals, the pool (slots, barriers, per-turn
 * cancellation), post-execute, budgets and reorder all run in the agent, unchanged. Only the body moves.
 *
 * 1. The body signs a job (tool, admitted arguments, call id, turn, index, attempt, a deadline from the
 *    contract's `timeoutMs`, an expiry — the deadline, or `jobExpiryMs` from now) with `secret`, adds it
 *    and waits for it to settle: it holds its pool slot from dispatch until then. The worker's value
 *    comes back raw; `render` and post policies run here.
 * 2. Nothing comes back unverified: the worker signs its value (or streamed item count), each streamed
 *    item and progress report, and its failure's reason for this job and call with `secret`. A result
 *    that does not verify — workers with another secret, a job moved to completed by hand, another
 *    job's result copied over — is a {@link RemoteToolError} `result_unverified` whose text is
 *    toolstream's own; a progress report that does not verify is dropped.
 * 3. A worker-side failure is thrown as a {@link RemoteToolError} (the result is a `tool_error` with the
 *    worker's text). A non-idempotent job whose worker died mid-body, or whose call's body already ran
 *    (a replayed job), is `outcome_unknown`; an idempotent one runs again on another worker (none left: 8).
 * 4. A body that streams on the worker streams here: items arrive in order while it runs
 *    (`streamed: true`), none lost or duplicated. Its `ctx.progress` reports are passed to this call's
 *    `ctx.progress` (so to the pipeline's events) in order as they come, and all of them before the result.
 * 5. Cancellation (cancel-rest, the run's signal, unsubscribe, timeouts) answers the call `cancelled`
 *    at once, as for any tool; then the job is removed if it still waits, or its worker aborts the
 *    body's signal. A body that ignores it keeps the slot at most the pipeline's `abortGraceMs`.
 * 6. In a durable turn the job's id is derived from the turn and the call's slot, so a resumed turn
 *    re-attaches to the job it started (finished jobs are kept `keepJobsMs`) instead of running it
 *    again; a started non-idempotent call whose job is gone is `outcome_unknown`, never added again.
 *    Outside a durable turn the id is random, so a replayed stream never picks up an old job's result.
 * 7. Results never depend on BullMQ's events alone: outstanding jobs are also read from job state every
 *    `reconcileMs` and when a connection comes back.
 * 8. It fails fast rather than wait for nothing. Workers send a heartbeat while they run: a job that
 *    waits `noWorkerMs` on a queue with no live worker is taken out of the queue — so no worker started
 *    later can run it — and its call fails `no_worker`, naming the queue (a fleet that is only busy
 *    waits); a started job whose worker was lost, with no worker left for `noWorkerMs`, is taken out
 *    once its lock lapsed, and its call is `outcome_unknown` (`no_worker` when idempotent). A Redis
 *    not reached within `connectTimeoutMs` fails the calls `redis_unreachable`, naming the address,
 *    with nothing added. At start-up, each queue is checked once and what is wrong goes
 *    to `onWarning`.
 *
 * A queue's connections open on its first call; one opens at once, for the start-up check. A contract's arguments travel as JSON: keep schemas
 * whose output is plain JSON the worker's schema accepts (no transforms into dates or classes).
 *
 * @throws {ConfigError} (`where: 'remoteTools'`) for a malformed option or contract.
 *
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { remoteTools } from 'toolstream/bullmq';
 * import { renderPage } from './contracts.js';
 * import { readFileTool } from './localTools.js';
 *
 * const fleet = remoteTools([renderPage], { connection: { url: process.env.REDIS_URL }, queue: 'browsers', secret: process.env.FLEET_SECRET! });
 * const pipeline = createPipeline({ tools: [...fleet.tools, readFileTool] }); // remote and local tools mix
 * const results = await pipeline.run(callsFromModel);
 * await fleet.close();
 * ```
 */
export function remoteTools(contracts: readonly ToolContract[], options: RemoteToolsOptions): RemoteTools {
  const fail = failer('remoteTools');
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  if (!Array.isArray(contracts)) fail('contracts', 'an array of contracts made by toolContract()', contracts);
  const { queue, prefix = DEFAULT_PREFIX, reconcileMs = DEFAULT_RECONCILE_MS, keepJobsMs = DEFAULT_KEEP_JOBS_MS, jobExpiryMs = DEFAULT_JOB_EXPIRY_MS } = options;
  const { noWorkerMs = DEFAULT_NO_WORKER_MS, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS, onWarning = warnFleet } = options;
  const connection = checkConnection('remoteTools', options.connection);
  const secret = checkSecret('remoteTools', options.secret);
  checkName('remoteTools', 'prefix', prefix);
  if (!isPositiveDuration(reconcileMs)) fail('reconcileMs', 'a positive number of milliseconds', reconcileMs);
  if (!isPositiveDuration(keepJobsMs) || keepJobsMs < 1000) fail('keepJobsMs', 'at least 1000 milliseconds', keepJobsMs);
  if (!isPositiveDuration(jobExpiryMs) || jobExpiryMs < 1000) fail('jobExpiryMs', 'at least 1000 milliseconds', jobExpiryMs);
  if (noWorkerMs !== Infinity && !isPositiveDuration(noWorkerMs)) fail('noWorkerMs', 'a positive number of milliseconds, or Infinity to wait for a worker as long as a call may', noWorkerMs);
  if (!isPositiveDuration(connectTimeoutMs)) fail('connectTimeoutMs', 'a positive number of milliseconds', connectTimeoutMs);
  if (typeof onWarning !== 'function') fail('onWarning', 'a function (warning) => void', onWarning);
  if (typeof queue !== 'string' && typeof queue !== 'function') fail('queue', 'a queue name or a function (contract) => queue name', queue);
  const seen = new Set<string>();
  const queues = contracts.map((contract, i) => {
    if (!isToolContract(contract)) fail(`contracts[${i}]`, 'a contract made by toolContract()', contract);
    if (seen.has(contract.name)) fail(`contracts[${i}].name`, 'unique among the contracts', contract.name);
    seen.add(contract.name);
    return checkName('remoteTools', typeof queue === 'string' ? 'queue' : `queue(contracts[${i}])`, typeof queue === 'string' ? queue : queue(contract));
  });
  checkSlots('remoteTools', connection, prefix, queues);
  const fleet = new AgentFleet(new FleetConnections(connection, connectTimeoutMs), prefix, { secret, jobExpiryMs, keepJobsMs }, reconcileMs, noWorkerMs);
  const tools = contracts.map((contract, i) => markReattaching(implementTool(contract, (args: unknown, ctx) => fleet.dispatch(contract, queues[i]!, args, ctx))));
  const served = [...new Set(queues)];
  if (served.length > 0) void fleet.checkAtStart(served, onWarning);
  return Object.freeze({ tools: Object.freeze(tools), workers: () => fleet.workers(served), close: () => fleet.close() });
}

/** The agent's connections: one watcher per queue, and the connections they share. */
class AgentFleet {
  readonly #watchers = new Map<string, QueueWatcher>();
  #commands: RedisClient | undefined = undefined;
  #subscriber: RedisClient | undefined = undefined;
  #closed: Promise<void> | undefined = undefined;

  constructor(
    private readonly connections: FleetConnections,
    private readonly prefix: string,
    /** What every job is signed with, and how long jobs live. */
    private readonly terms: DispatchTerms,
    private readonly reconcileMs: number,
    private readonly noWorkerMs: number,
  ) {}

  async dispatch(contract: ToolContract, queue: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    if (this.#closed !== undefined) throw new RemoteToolError('job_lost', 'remoteTools was closed; no job was added.', '');
    const watcher = this.#watcher(queue);
    await this.#reachable();
    const durable = durableCallOf(ctx);
    const attempt = attemptOf(ctx);
    const jobId = durable === undefined ? `ts-${randomUUID()}` : durableJobId(durable.turn, durable.index, attempt);
    // A resumed call re-attaches only to a job that exists: adding it again would run a body that may have run.
    if (durable?.resumed === true && !contract.idempotent && !(await watcher.exists(jobId))) {
      return outcome.unknown('it was started before the turn was resumed, but its job is no longer in Redis (removed after keepJobsMs, or never added), and it is not idempotent, so it was not run again; it may or may not have taken effect.');
    }
    // Aborted while this process connected or looked the job up (before the listener below): no job, no body.
    ctx.signal.throwIfAborted();
    const data = dispatchPayload(contract, args, ctx, { jobId, prefix: this.prefix, queue, attempt }, this.terms);
    const signer = new OutcomeSigner(this.terms.secret, { jobId, callId: ctx.callId, argsHash: argsHash(args) });
    const watch = watcher.watch(jobId);
    const progress = (watch.progress = new ProgressRelay(this.#commands!, watcher.keys.progress(jobId), signer, (value) => ctx.progress(value)));
    const keep = { age: Math.ceil(this.terms.keepJobsMs / 1000) };
    const added = watcher.queue.add(contract.name, data, { jobId, attempts: 1, removeOnComplete: keep, removeOnFail: keep });
    const { signal } = ctx;
    // Aborted because this process lost the durable turn to another: the job is the new owner's (it
    // re-attaches to it), so it is left alone — only this process's wait ends.
    const onAbort = () => {
      if (durable !== undefined && !durable.leaseHeld()) return;
      void added.then(() => watcher.cancel(jobId)).catch(() => undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    void watch.settled.then(() => signal.removeEventListener('abort', onAbort));
    try {
      await added;
    } catch (error) {
      watch.settle({ kind: 'gone', why: 'it could not be added' });
      throw error;
    }
    watch.added = true;
    watcher.presence.track(watch, contract.idempotent); // voided if the queue has no worker for noWorkerMs while it is waited for
    if (durable?.resumed === true) void watcher.reconcile([watch]); // it may have finished while no one watched
    for (;;) {
      await Promise.race([watch.settled, watch.nextChange()]);
      if (watch.outcome !== undefined) break;
      // Woken by an items notice: a stream, once its items exist (a notice alone proves nothing: anyone may publish one).
      if ((await this.#commands!.exists(watcher.keys.items(jobId)).catch(() => 0)) === 1) return outcome.streamed(this.#streamed(watcher, watch, signer, signal, progress));
    }
    const returned = await settledReturn(watch.outcome, signer, progress);
    return returned.k === 's' ? outcome.streamed(this.#streamed(watcher, watch, signer, signal, progress)) : returned.value;
  }

  /** A streamed job's items as they come, each verified; then its signed item count is held against them. */
  async *#streamed(watcher: QueueWatcher, watch: JobWatch, signer: OutcomeSigner, signal: AbortSignal, progress: ProgressRelay): AsyncGenerator<unknown, void, undefined> {
    const read = { count: 0 };
    yield* readItems(this.#commands!, watcher.keys.items(watch.id), watch, signer, signal, read);
    if (signal.aborted) return; // the call is answered `cancelled` already; the items after the abort were not read
    const returned = await settledReturn(await watch.settled, signer, progress); // throws the job's failure after its partial items
    if (returned.k !== 's' || returned.n !== read.count) {
      throw unverified(watch.id, `it signed ${returned.k === 's' ? `${returned.n} streamed items` : 'a value'}, but ${read.count} verified items were read`);
    }
  }

  #watcher(queue: string): QueueWatcher {
    let watcher = this.#watchers.get(queue);
    if (watcher !== undefined) return watcher;
    this.#commands ??= this.#openCommands();
    this.#subscriber ??= this.#openSubscriber();
    watcher = new QueueWatcher(queue, this.connections, this.prefix, this.#commands, this.reconcileMs, this.noWorkerMs);
    this.#watchers.set(queue, watcher);
    void this.#subscriber.subscribe(watcher.keys.itemsChannel).catch(() => undefined);
    return watcher;
  }

  /** Resolves once Redis was reached; else forgets every connection (all ended by now) and throws `redis_unreachable`. */
  async #reachable(): Promise<void> {
    try {
      await this.connections.reachable();
    } catch (error) {
      const watchers = [...this.#watchers.values()];
      this.#watchers.clear();
      this.#commands = this.#subscriber = undefined; // the next call opens new ones, and tries again
      void Promise.allSettled(watchers.map((watcher) => watcher.close())); // their connections are ended: BullMQ's loops stop
      throw error;
    }
  }

  /** How many live workers each of `queues` has (their heartbeats). */
  async workers(queues: readonly string[]): Promise<Readonly<Record<string, number>>> {
    if (this.#closed !== undefined) throw new RemoteToolError('job_lost', 'remoteTools was closed.', '');
    this.#commands ??= this.#openCommands();
    await this.#reachable();
    const counts = await Promise.all(queues.map((queue) => liveWorkers(this.#commands!, new FleetKeys(this.prefix, queue))));
    return Object.freeze(Object.fromEntries(queues.map((queue, i) => [queue, counts[i]!.count])));
  }

  /** Tells `onWarning` what is wrong at start-up: Redis out of reach, or queues without a worker. */
  async checkAtStart(queues: readonly string[], onWarning: (warning: FleetWarning) => void): Promise<void> {
    const warn = (warning: FleetWarning) => {
      try {
        onWarning(warning);
      } catch {
        // a warning's listener that throws changes nothing: the calls fail fast all the same
      }
    };
    let counts: Readonly<Record<string, number>>;
    try {
      counts = await this.workers(queues);
    } catch (error) {
      if (this.#closed !== undefined || !(error instanceof RemoteToolError) || error.code !== 'redis_unreachable') return;
      return warn({ code: 'redis_unreachable', address: error.address ?? this.connections.address, message: `remoteTools: ${error.message}` });
    }
    for (const queue of queues) {
      if (counts[queue] !== 0 || this.#closed !== undefined) continue;
      const message =
        `remoteTools: no worker serves queue "${queue}" (prefix "${this.prefix}") on ${this.connections.named}: none sends a heartbeat. ` +
        `${this.noWorkerMs === Infinity ? 'Its calls wait for one (noWorkerMs: Infinity)' : `Its calls fail (no_worker) after waiting ${this.noWorkerMs} ms (noWorkerMs) unless one starts`}: ` +
        `createToolWorker({ queue: '${queue}', prefix: '${this.prefix}', connection, secret, tools }).`;
      warn({ code: 'no_worker', queue, message });
    }
  }

  #openCommands(): RedisClient {
    const commands = this.connections.open();
    // Back after a disconnect: events may have been missed meanwhile.
    let connectedBefore = false;
    commands.on('ready', () => {
      if (connectedBefore) for (const watcher of this.#watchers.values()) watcher.reconnected();
      connectedBefore = true;
    });
    return commands;
  }

  #openSubscriber(): RedisClient {
    const subscriber = this.connections.open();
    subscriber.on('message', (channel: string, jobId: string) => {
      const progressOf = progressNoticeOf(jobId);
      for (const watcher of this.#watchers.values()) {
        if (watcher.keys.itemsChannel !== channel) continue;
        if (progressOf === undefined) watcher.itemsAdded(jobId);
        else watcher.progressAdded(progressOf);
      }
    });
    return subscriber;
  }

  close(): Promise<void> {
    this.#closed ??= boundedClose(
      (async () => {
        await Promise.allSettled([...this.#watchers.values()].map((watcher) => watcher.close()));
        await Promise.allSettled([this.#commands, this.#subscriber].flatMap((redis) => (redis === undefined ? [] : [closeRedis(redis)])));
      })(),
      CLOSE_MS,
      this.connections,
    );
    return this.#closed;
  }
}
