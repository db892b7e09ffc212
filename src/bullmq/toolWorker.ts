import type { ConnectionOptions, Job } from 'bullmq';
import { isCount, isPositiveDuration } from '../util/validate.js';
import type { AnyTool } from '../types/tool.js';
import type { JobObserver } from '../types/traceContext.js';
import { CancelNotices } from './cancelNotices.js';
import { FleetKeys } from './fleetKeys.js';
import { checkConnection, checkName, checkSecret, checkSlots, DEFAULT_PREFIX, failer } from './fleetOptions.js';
import { boundedClose, closeRedis, DEFAULT_CONNECT_TIMEOUT_MS, FleetConnections } from './fleetRedis.js';
import { checkStalls, FleetWorker } from './fleetWorker.js';
import { JobRunner } from './jobRunner.js';
import { LockWatch } from './lockWatch.js';
import { outcomeRecord } from './outcomeRecord.js';
import { warnFleet } from './fleetWarning.js';
import { RemoteToolError } from './remoteToolError.js';
import { heartbeatMs, WorkerHeartbeat } from './workerHeartbeat.js';

/** Options of {@link createToolWorker}. */
export interface ToolWorkerOptions {
  /**
   * BullMQ's connection: ioredis options, an ioredis `Redis`, or an ioredis `Cluster` (then `prefix`, or
   * the queue name, needs a hash tag: see `RemoteToolsOptions.prefix`). A client given is copied for each
   * connection (BullMQ's blocking reads get copies of those, with `maxRetriesPerRequest: null`), never closed by us.
   */
  readonly connection: ConnectionOptions;
  /** The queue it takes jobs from. */
  readonly queue: string;
  /** The tools it runs (`implementTool(contract, body)`), at most one per name. */
  readonly tools: readonly AnyTool[];
  /** How many bodies it runs at once. @default 1 */
  readonly concurrency?: number;
  /** The secret the agents sign jobs with: at least 32 bytes. */
  readonly secret: string | Uint8Array;
  /** BullMQ's key prefix; the same as the agents' (with a hash tag on a Redis Cluster, e.g. `'{toolstream}'`). @default 'toolstream' */
  readonly prefix?: string;
  /**
   * The job lock's duration: a worker that dies is noticed about `2 × lockMs` later at most (its lock
   * lapses within `lockMs`; the stall check runs every `lockMs / 2` and moves a job whose lock is gone
   * at its next look), so 10 s by default. It is also how long Redis may be out of reach before the
   * bodies running are stopped (see 6. below). @default 5000
   */
  readonly lockMs?: number;
  /**
   * How many times an `idempotent` tool's job may run again after its worker was lost mid-body (died,
   * or lost its lock: cut off from Redis, or its event loop blocked for `lockMs`). A job lost once more
   * than that fails: its call is a `tool_error` whose cause is a `RemoteToolError` with code
   * `workers_lost`, which says how many times. Bodies that take a worker down with them stop there.
   * (A job of a tool that is not idempotent never runs again: `outcome_unknown`.) @default 1
   */
  readonly maxReruns?: number;
  /**
   * A hook around each job's body, once every check passed: given the job (with the trace context its
   * agent sent), a watch the body's whole course runs in. `workerTracing()` (`toolstream/otel`) runs it
   * in a span that continues the agent's trace. One that throws is a process warning; the body runs
   * all the same.
   */
  readonly observe?: JobObserver;
  /**
   * How long the first connection to Redis may take: none up by then (no server there, a wrong address)
   * and the worker closes itself — no connection is left retrying — and `ready()` rejects with a
   * `RemoteToolError` `redis_unreachable` naming the address. Once Redis was reached, an outage is
   * waited out, as ever. @default 5000
   */
  readonly connectTimeoutMs?: number;
}

/** A running worker: {@link createToolWorker}. */
export interface ToolWorker {
  /**
   * Resolves once it is connected, takes jobs, hears cancels and sends its heartbeat (agents see it):
   * for health checks, tests, and a process that says "ready". Jobs added before are not lost; they
   * wait in the queue. Rejects with a `RemoteToolError` `redis_unreachable`, naming the address, when
   * Redis was not reached within `connectTimeoutMs` (the worker has closed itself then).
   */
  ready(): Promise<void>;
  /**
   * Stops taking jobs, waits for the bodies running, and closes every connection it opened — within a
   * few seconds of the last body ending, whatever Redis does (a connection that cannot close politely,
   * Redis away or out of reach, is disconnected).
   */
  close(): Promise<void>;
}

const DEFAULT_LOCK_MS = 5000;
const DEFAULT_MAX_RERUNS = 1;
/** How long BullMQ may take to finish its work once the last body ended, before its connections are ended. */
const CLOSE_AFTER_BODIES_MS = 2000;

/**
 * A worker process's side of a fleet: takes the jobs of `queue` that agents' `remoteTools` add, and
 * runs their bodies.
 *
 * 1. A job not signed with `secret` (or copied under another id or queue) fails at once, unrecoverably,
 *    without running anything; so does one whose tool it does not have, one whose signed expiry passed
 *    before it started (a job replayed later), and one of a payload version it does not verify (an
 *    agent of another toolstream version, during a rolling upgrade: the reason names both versions).
 * 2. The arguments are validated again with the tool's schema; rejected ones fail the job with the
 *    schema's issues (the agent's call gets an error result).
 * 3. Before a body of a tool that is not `idempotent` starts, the worker takes the call's run record in
 *    Redis (set if absent, kept until the job's expiry and a margin for clock skew): a job of a call whose
 *    body already ran — the same job re-added under its id, or retried from completed with its counters
 *    reset — does not run, and the call is `outcome_unknown`.
 * 4. The body runs with a `ctx` like the pipeline's: `callId`, `index`, `turn`, the agent's `idempotencyKey`
 *    (signed with the job), and a `signal` that aborts when the agent cancels the call (through a Redis
 *    channel every worker listens on before it takes a job, with a marker in Redis for the cases a message
 *    can miss: see `CancelNotices`) and at the job's deadline. `cancelRest()` is a no-op: the turn lives
 *    in the agent.
 * 5. Its value goes back raw; a stream (Observable or AsyncIterable) goes back item by item while the
 *    body runs, and so do its `ctx.progress` reports (at most 1,000 a job; the agent's budget applies).
 *    Everything it sends back — the value or item count, each item, each report, a failure's reason — is
 *    signed with `secret` for the job and its call, and the agent uses nothing it cannot verify.
 * 6. A worker that dies mid-body is noticed within about `2 × lockMs` (10 s by default): an `idempotent`
 *    tool's job runs again on another worker (up to `maxReruns` times), any other fails as
 *    `outcome_unknown` and never runs twice. BullMQ renews the lock while a body runs, so bodies may take
 *    hours — but a worker that cannot renew it (cut off from Redis, Redis away for `lockMs`, or its
 *    event loop blocked that long) aborts the body's signal as soon as the lock may have lapsed, before
 *    another worker can take the job, and its job is handled as a lost worker's: a body that honours
 *    its signal never overlaps the job's next run. A body that had ended by then keeps its outcome: the
 *    worker records it beside the job, and the agent and the job's next worker use it.
 * 7. While it runs it sends a heartbeat on its queue (a key with a time to live of `lockMs`, at least a
 *    second, refreshed every third of it, deleted at `close()`), busy or idle: agents tell by it a queue
 *    no worker serves (their calls fail fast, `no_worker`) from one whose workers are all busy.
 * 8. A Redis it cannot reach within `connectTimeoutMs` closes it: `ready()` rejects with
 *    `redis_unreachable`, naming the address (a process warning says so when `ready()` was not
 *    called), and nothing is left retrying — await `ready()` and exit non-zero, so a supervisor
 *    restarts the worker until Redis is up.
 *
 * @throws {ConfigError} (`where: 'createToolWorker'`) for a malformed option.
 *
 * @example
 * ```ts
 * import { implementTool } from 'toolstream';
 * import { createToolWorker } from 'toolstream/bullmq';
 * import { renderPage } from './contracts.js';
 *
 * const worker = createToolWorker({
 *   connection: { url: process.env.REDIS_URL },
 *   queue: 'browsers',
 *   secret: process.env.FLEET_SECRET!,
 *   concurrency: 4,
 *   tools: [implementTool(renderPage, ({ url }, { signal }) => browse(url, signal))],
 * });
 * await worker.ready(); // rejects, naming the address, when Redis cannot be reached
 * process.once('SIGTERM', () => void worker.close());
 * ```
 */
export function createToolWorker(options: ToolWorkerOptions): ToolWorker {
  const fail = failer('createToolWorker');
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  const { tools, concurrency = 1, prefix = DEFAULT_PREFIX, lockMs = DEFAULT_LOCK_MS, maxReruns = DEFAULT_MAX_RERUNS, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS } = options;
  const connection = checkConnection('createToolWorker', options.connection);
  const queue = checkName('createToolWorker', 'queue', options.queue);
  const secret = checkSecret('createToolWorker', options.secret);
  checkName('createToolWorker', 'prefix', prefix);
  checkSlots('createToolWorker', connection, prefix, [queue]);
  if (!isCount(concurrency, 1)) fail('concurrency', 'an integer of at least 1', concurrency);
  if (!isPositiveDuration(lockMs) || lockMs < 100) fail('lockMs', 'at least 100 milliseconds', lockMs);
  if (!isCount(maxReruns, 0)) fail('maxReruns', 'an integer of at least 0', maxReruns);
  if (options.observe !== undefined && typeof options.observe !== 'function') fail('observe', 'a function (job) => watch, such as workerTracing()', options.observe);
  if (!isPositiveDuration(connectTimeoutMs)) fail('connectTimeoutMs', 'a positive number of milliseconds', connectTimeoutMs);
  if (!Array.isArray(tools)) fail('tools', 'an array of tools (implementTool(contract, body))', tools);
  const byName = new Map<string, AnyTool>();
  tools.forEach((tool, i) => {
    if (typeof tool !== 'object' || tool === null || typeof tool.execute !== 'function' || typeof tool.name !== 'string') {
      fail(`tools[${i}]`, 'a tool (implementTool(contract, body) or defineTool)', tool);
    }
    if (byName.has(tool.name)) fail(`tools[${i}].name`, 'unique among the tools', tool.name);
    byName.set(tool.name, tool);
  });

  const keys = new FleetKeys(prefix, queue);
  const connections = new FleetConnections(connection, connectTimeoutMs);
  const commands = connections.open();
  const subscriber = connections.open();
  // BullMQ's own (its blocking reads get a duplicate): the lock renewals go through it.
  const bullmq = connections.open();
  // A job that ended while its lock may have lapsed: its outcome, where the agent and its next worker find it.
  const locks = new LockWatch(lockMs, () => bullmq.readyAt, (jobId, outcome, keepMs) => {
    void commands.set(keys.outcome(jobId), outcomeRecord(outcome), 'PX', keepMs).catch(() => undefined);
  });
  // `worker` is assigned below, before any message can arrive (the subscription is not made yet).
  const notices = new CancelNotices(keys, commands, (jobId) => void worker.cancelJob(jobId, 'cancelled by the agent'));
  const run = new JobRunner(byName, keys, secret, notices, commands, locks, maxReruns, options.observe);
  const stalledInterval = Math.max(50, Math.round(lockMs / 2));
  const worker = new FleetWorker(
    queue,
    (job: Job, _token: string | undefined, signal: AbortSignal | undefined) => run.process(job, signal),
    {
      connection: bullmq,
      prefix,
      concurrency,
      lockDuration: lockMs,
      stalledInterval,
      // Ours refuses a job lost more than `maxReruns` times first, signed (`workers_lost`); BullMQ's is the fallback.
      maxStalledCount: maxReruns + 1,
      skipStalledCheck: true, // checkStalls below
      autorun: false, // it takes jobs once it hears cancels (see CancelNotices)
    },
    locks,
  );
  worker.on('error', () => undefined); // BullMQ reconnects; a job whose lock lapsed is recovered by the stall check
  worker.on('completed', (job: Job) => locks.finished(job.id!));
  worker.on('failed', (job: Job | undefined) => job?.id !== undefined && locks.finished(job.id));
  subscriber.on('message', (_channel: string, jobId: string) => notices.hear(jobId));
  const listening = subscriber.subscribe(keys.cancelChannel);
  // ioredis subscribes again by itself after a reconnect; cancels published in the gap are in their markers.
  listening.then(() => subscriber.on('ready', () => void notices.resubscribed()), () => undefined);
  const heartbeat = new WorkerHeartbeat(commands, keys, heartbeatMs(lockMs), concurrency);
  let stopStallChecks: (() => void) | undefined;
  let closed: Promise<void> | undefined;
  // Connected, hearing cancels, seen by the agents: then it takes jobs. Redis out of reach: it closes.
  const started = connections.reachable().then(async () => {
    await listening;
    await heartbeat.start();
    if (closed !== undefined) return;
    stopStallChecks = checkStalls(worker, bullmq, lockMs, stalledInterval);
    void worker.run().catch(() => undefined);
  });
  let readyAsked = false;
  started.catch((error: unknown) => {
    const closedByOwner = closed !== undefined; // then it was not Redis that closed it: nothing to say
    void close();
    // No one asked ready(), so no one hears why it closed: say it, as a process warning (Node prints it).
    if (!readyAsked && !closedByOwner && error instanceof RemoteToolError && error.address !== undefined) {
      warnFleet({ code: 'redis_unreachable', address: error.address, message: `createToolWorker (queue "${queue}"): ${error.message} The worker has closed.` });
    }
  });

  const close = () =>
    (closed ??= (async () => {
      stopStallChecks?.();
      const unseen = heartbeat.stop(); // sent before the connections close: agents stop counting on it at once
      // BullMQ stops taking jobs and waits for the bodies (cancels are still heard meanwhile), then for
      // Redis to take their outcomes: that part is bounded, once the bodies ended.
      const closing = Promise.all([worker.close(), unseen]).then(() => Promise.all([closeRedis(subscriber), closeRedis(commands)]));
      await Promise.race([closing, locks.idle()]);
      await boundedClose(closing, CLOSE_AFTER_BODIES_MS, connections);
      locks.clear();
    })());
  return Object.freeze({
    ready: async () => {
      readyAsked = true;
      await started;
      await worker.waitUntilReady();
    },
    close,
  });
}
