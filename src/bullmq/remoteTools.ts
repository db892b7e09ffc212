import { randomUUID } from 'node:crypto';
import type { ConnectionOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { AnyTool, ToolContext } from '../defineTool.js';
import { OutcomeUnknown } from '../internal/outcomeUnknown.js';
import { attemptOf, durableCallOf, markReattaching } from '../internal/reattach.js';
import { streamHandoff } from '../internal/streamHandoff.js';
import { isPositiveDuration } from '../internal/validate.js';
import { implementTool, isToolContract, type ToolContract } from '../toolContract.js';
import { checkConnection, checkName, checkSecret, closeRedis, DEFAULT_PREFIX, failer, openRedis } from './fleetOptions.js';
import { durableJobId, signPayload } from './jobPayload.js';
import type { JobOutcome, JobWatch } from './jobWatch.js';
import { QueueWatcher } from './queueWatcher.js';
import { readItems } from './remoteItems.js';
import { ProgressRelay, progressNoticeOf } from './remoteProgress.js';
import { readFailure, RemoteToolError } from './remoteToolError.js';

/** Options of {@link remoteTools}. */
export interface RemoteToolsOptions {
  /** BullMQ's connection: ioredis options (`{ host, port }`, `{ url }`) or an ioredis instance (duplicated, never closed by us). */
  readonly connection: ConnectionOptions;
  /** The queue every job goes to, or one per contract (one queue per limited resource, see `setFleetLimits`). */
  readonly queue: string | ((contract: ToolContract) => string);
  /** The secret the workers share: at least 32 bytes. Every job is signed with it. */
  readonly secret: string | Uint8Array;
  /** BullMQ's key prefix; agents and workers of a fleet use the same. @default 'toolstream' */
  readonly prefix?: string;
  /**
   * How often every outstanding job is checked against its job state, besides the events: the longest
   * a result whose event was lost waits (and, results being in model order, the calls after it). One
   * round costs O(1) per outstanding job in one script per 500. @default 250
   */
  readonly reconcileMs?: number;
  /** How long finished jobs (and their streamed items) stay in Redis, so a resumed durable turn re-attaches to them. @default 86_400_000 (24 h) */
  readonly keepJobsMs?: number;
}

/** The tools {@link remoteTools} made, and the connections behind them. */
export interface RemoteTools {
  /** One pipeline tool per contract, in their order. */
  readonly tools: readonly AnyTool[];
  /** Closes every connection it opened; calls still waiting fail (`job_lost`). Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_RECONCILE_MS = 250;
const DEFAULT_KEEP_JOBS_MS = 24 * 60 * 60 * 1000;

/**
 * Pipeline tools whose bodies run as BullMQ jobs on a worker fleet (`createToolWorker`). They are
 * ordinary tools: intake, policies, the guard and approvals, the pool (slots, barriers, per-turn
 * cancellation), post-execute, budgets and reorder all run in the agent, unchanged. Only the body moves.
 *
 * 1. The body signs a job (tool, admitted arguments, call id, turn, index, a deadline from the
 *    contract's `timeoutMs`) with `secret`, adds it and waits for it to settle: it holds its pool slot
 *    from dispatch until then. The worker's value comes back raw; `render` and post policies run here.
 * 2. A worker-side failure is thrown as a {@link RemoteToolError} (the result is a `tool_error` with the
 *    worker's text). A non-idempotent job whose worker died mid-body is `outcome_unknown`; an idempotent
 *    one runs again on another worker.
 * 3. A body that streams on the worker streams here: items arrive in order while it runs
 *    (`streamed: true`), none lost or duplicated. Its `ctx.progress` reports are passed to this call's
 *    `ctx.progress` (so to the pipeline's events) in order as they come, and all of them before the result.
 * 4. Cancellation (cancel-rest, the run's signal, unsubscribe, timeouts) answers the call `cancelled`
 *    at once, as for any tool; then the job is removed if it still waits, or its worker aborts the
 *    body's signal. A body that ignores it keeps the slot at most the pipeline's `abortGraceMs`.
 * 5. In a durable turn the job's id is derived from the turn and the call's slot, so a resumed turn
 *    re-attaches to the job it started (finished jobs are kept `keepJobsMs`) instead of running it
 *    again; outside one it is random, so a replayed stream never picks up an old job's result.
 * 6. Results never depend on BullMQ's events alone: outstanding jobs are also read from job state every
 *    `reconcileMs` and when a connection comes back.
 *
 * Connections open on the first call of each queue. A contract's arguments travel as JSON: keep schemas
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
  const { queue, prefix = DEFAULT_PREFIX, reconcileMs = DEFAULT_RECONCILE_MS, keepJobsMs = DEFAULT_KEEP_JOBS_MS } = options;
  const connection = checkConnection('remoteTools', options.connection);
  const secret = checkSecret('remoteTools', options.secret);
  checkName('remoteTools', 'prefix', prefix);
  if (!isPositiveDuration(reconcileMs)) fail('reconcileMs', 'a positive number of milliseconds', reconcileMs);
  if (!isPositiveDuration(keepJobsMs) || keepJobsMs < 1000) fail('keepJobsMs', 'at least 1000 milliseconds', keepJobsMs);
  if (typeof queue !== 'string' && typeof queue !== 'function') fail('queue', 'a queue name or a function (contract) => queue name', queue);
  const seen = new Set<string>();
  const queues = contracts.map((contract, i) => {
    if (!isToolContract(contract)) fail(`contracts[${i}]`, 'a contract made by toolContract()', contract);
    if (seen.has(contract.name)) fail(`contracts[${i}].name`, 'unique among the contracts', contract.name);
    seen.add(contract.name);
    return checkName('remoteTools', typeof queue === 'string' ? 'queue' : `queue(contracts[${i}])`, typeof queue === 'string' ? queue : queue(contract));
  });
  const fleet = new AgentFleet(connection, prefix, secret, reconcileMs, keepJobsMs);
  const tools = contracts.map((contract, i) => markReattaching(implementTool(contract, (args: unknown, ctx) => fleet.dispatch(contract, queues[i]!, args, ctx))));
  return Object.freeze({ tools: Object.freeze(tools), close: () => fleet.close() });
}

/** The agent's connections: one watcher per queue, and the connections they share. */
class AgentFleet {
  readonly #watchers = new Map<string, QueueWatcher>();
  #commands: Redis | undefined = undefined;
  #subscriber: Redis | undefined = undefined;
  #closed: Promise<void> | undefined = undefined;

  constructor(
    private readonly connection: ConnectionOptions,
    private readonly prefix: string,
    private readonly secret: Buffer,
    private readonly reconcileMs: number,
    private readonly keepJobsMs: number,
  ) {}

  async dispatch(contract: ToolContract, queue: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    if (this.#closed !== undefined) throw new RemoteToolError('job_lost', 'remoteTools was closed; no job was added.', '');
    const watcher = this.#watcher(queue);
    const durable = durableCallOf(ctx);
    const jobId = durable === undefined ? `ts-${randomUUID()}` : durableJobId(durable.turn, durable.index, attemptOf(ctx));
    const timeoutMs = contract.timeoutMs;
    const deadline = timeoutMs === undefined || timeoutMs === Infinity ? null : Date.now() + timeoutMs;
    const unsigned = { v: 1 as const, tool: contract.name, args, callId: ctx.callId, turn: ctx.turn ?? null, index: ctx.index, key: ctx.idempotencyKey, deadline, keepMs: this.keepJobsMs };
    const data = signPayload(this.secret, unsigned, { jobId, prefix: this.prefix, queue });
    const watch = watcher.watch(jobId);
    const progress = (watch.progress = new ProgressRelay(this.#commands!, watcher.keys.progress(jobId), (value) => ctx.progress(value)));
    const keep = { age: Math.ceil(this.keepJobsMs / 1000) };
    const added = watcher.queue.add(contract.name, data, { jobId, attempts: 1, removeOnComplete: keep, removeOnFail: keep });
    const { signal } = ctx;
    const onAbort = () => void added.then(() => watcher.cancel(jobId)).catch(() => undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    void watch.settled.then(() => signal.removeEventListener('abort', onAbort));
    try {
      await added;
    } catch (error) {
      watch.settle({ kind: 'gone', why: 'it could not be added' });
      throw error;
    }
    watch.added = true;
    if (durable?.resumed === true) void watcher.reconcile([watch]); // it may have finished while no one watched
    await Promise.race([watch.settled, watch.nextChange()]);
    if (watch.outcome === undefined || isStream(watch.outcome)) {
      return streamHandoff(this.#streamed(watcher, watch, signal, progress));
    }
    if (mayHaveProgress(watch.outcome)) await progress.drain(); // every report the worker sent, before the result
    return valueOf(watch.outcome, jobId);
  }

  async *#streamed(watcher: QueueWatcher, watch: JobWatch, signal: AbortSignal, progress: ProgressRelay): AsyncGenerator<unknown, void, undefined> {
    yield* readItems(this.#commands!, watcher.keys.items(watch.id), watch, signal);
    const outcome = await watch.settled;
    if (mayHaveProgress(outcome)) await progress.drain();
    if (!isStream(outcome)) valueOf(outcome, watch.id); // throws the job's failure after its partial items
  }

  #watcher(queue: string): QueueWatcher {
    let watcher = this.#watchers.get(queue);
    if (watcher !== undefined) return watcher;
    this.#commands ??= this.#openCommands();
    this.#subscriber ??= this.#openSubscriber();
    watcher = new QueueWatcher(queue, this.connection, this.prefix, this.#commands, this.reconcileMs);
    this.#watchers.set(queue, watcher);
    void this.#subscriber.subscribe(watcher.keys.itemsChannel).catch(() => undefined);
    return watcher;
  }

  #openCommands(): Redis {
    const commands = openRedis(this.connection);
    // Back after a disconnect: events may have been missed meanwhile.
    let connectedBefore = false;
    commands.on('ready', () => {
      if (connectedBefore) for (const watcher of this.#watchers.values()) void watcher.reconcile();
      connectedBefore = true;
    });
    return commands;
  }

  #openSubscriber(): Redis {
    const subscriber = openRedis(this.connection);
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
    this.#closed ??= (async () => {
      await Promise.allSettled([...this.#watchers.values()].map((watcher) => watcher.close()));
      await Promise.allSettled([this.#commands, this.#subscriber].flatMap((redis) => (redis === undefined ? [] : [closeRedis(redis)])));
    })();
    return this.#closed;
  }
}

/**
 * Whether the job may have sent progress the relay has not read: a completed job says how many it sent
 * (none: no read, no round trip); a failed one does not, so its reports are read.
 */
function mayHaveProgress(outcome: JobOutcome): boolean {
  return outcome.kind !== 'completed' || (outcome.result?.p ?? 0) > 0;
}

function isStream(outcome: JobOutcome): boolean {
  return outcome.kind === 'completed' && outcome.result?.k === 's';
}

/** The worker's value, or its failure thrown as the body's. */
function valueOf(outcome: JobOutcome, jobId: string): unknown {
  switch (outcome.kind) {
    case 'completed': {
      const envelope = outcome.result;
      if (envelope === undefined) throw new RemoteToolError('job_failed', 'The job completed without a toolstream result (was it run by a toolstream worker?).', jobId);
      return envelope.k === 'v' ? envelope.value : undefined;
    }
    case 'failed': {
      const { code, text } = readFailure(outcome.reason);
      if (code === 'outcome_unknown') throw new OutcomeUnknown(text);
      throw new RemoteToolError(code, text, jobId);
    }
    case 'gone':
      throw new RemoteToolError('job_lost', `The job is gone: ${outcome.why}.`, jobId);
  }
}
