import { brand } from '../util/brand.js';

/**
 * Why a remote tool's job failed, as its call's result tells it (`result.error.cause` of a `tool_error`):
 * - `'tool_failed'`: the body threw, rejected or its stream errored on the worker (`message` is its text);
 * - `'invalid_args'`: the worker's schema rejected the arguments (`message` lists the issues);
 * - `'unknown_tool'`: no worker tool of that name on the queue;
 * - `'refused'`: the worker refused the job (not signed with its secret, changed after signing, or a
 *   payload version it does not verify: agents and workers of different versions during an upgrade);
 * - `'timeout'`: the job's deadline passed on the worker, or it expired before a worker started it;
 * - `'cancelled'`: the job was cancelled before or while its body ran;
 * - `'workers_lost'`: an idempotent job's workers were lost more times than it may run again (the
 *   workers' `maxReruns`, 1 by default): each died, or lost its lock on the job, before the body ended;
 *   the message says how many times;
 * - `'job_lost'`: the job is gone from Redis (removed, expired, or Redis lost its data);
 * - `'no_worker'`: no worker of the job's queue sent a heartbeat for the agent's `noWorkerMs` (5 s by
 *   default) while the job waited, so the agent took the job out of the queue before any worker started
 *   it — it did not run, and a worker that starts later cannot run it. Or an `idempotent` tool's job
 *   was started and its worker lost (killed: its lock on the job lapsed), and no worker was left for
 *   `noWorkerMs` to run it again, so the agent took the job out of Redis — its body may have run in
 *   part, and no worker can run it later. `queue` names the queue; the message says which case, and how
 *   to start a worker. A queue whose workers are all busy is not this: its calls wait, as their workers
 *   are alive;
 * - `'redis_unreachable'`: the first connection to Redis did not come up within `connectTimeoutMs` (5 s
 *   by default): no job was added; `address` names the Redis tried. (Once connected, a Redis that goes
 *   away is waited for: calls are bounded by their deadlines.)
 * - `'result_unverified'`: what the job returned (its value, failure, streamed items or their count) is
 *   not signed with the agent's secret for this call, so none of it was used — workers running with
 *   another secret or an older toolstream, or a result written into Redis by something else (a job moved
 *   to completed by hand, another job's result copied over). The message never carries the unverified text.
 * A worker that died mid-body of a non-idempotent job (another worker found it, or none was left for
 * `noWorkerMs`), or a job whose call's body already ran, gives no `RemoteToolError`: the call's result
 * is `outcome_unknown`.
 */
export type RemoteToolErrorCode =
  | 'tool_failed'
  | 'invalid_args'
  | 'unknown_tool'
  | 'refused'
  | 'timeout'
  | 'cancelled'
  | 'workers_lost'
  | 'job_lost'
  | 'result_unverified'
  | 'no_worker'
  | 'redis_unreachable';

/**
 * Where a {@link RemoteToolError} happened, when its code says: the queue of `no_worker`, the Redis of
 * `redis_unreachable`.
 *
 * @example
 * ```ts
 * const place: RemoteToolErrorPlace = { queue: 'browsers' };
 * throw new RemoteToolError('no_worker', 'No worker serves queue "browsers"', jobId, place);
 * ```
 */
export interface RemoteToolErrorPlace {
  /** The queue no worker serves (`no_worker`). */
  readonly queue?: string;
  /** The Redis that could not be reached, as `host:port`, a socket path or a URL without its password (`redis_unreachable`). */
  readonly address?: string;
}

/**
 * A remote tool's job failed: what its body throws in the agent, so the call's result is a `tool_error`
 * whose message is the worker's signed text (toolstream's own for `job_lost`, `result_unverified`, and
 * `workers_lost` when BullMQ failed the job itself) and whose `cause` is this error, discriminated on `code`.
 *
 * @example
 * ```ts
 * const [result] = await pipeline.run(calls);
 * if (result.status === 'error' && result.error.code === 'tool_error' && result.error.cause instanceof RemoteToolError) {
 *   if (result.error.cause.code === 'result_unverified') alert('the workers may have another secret');
 *   if (result.error.cause.code === 'no_worker') alert(`start a worker for queue ${result.error.cause.queue}`);
 * }
 * ```
 */
export class RemoteToolError extends Error {
  static {
    brand(this, 'RemoteToolError');
  }

  override readonly name = 'RemoteToolError';
  /** The queue no worker serves, for `no_worker`; else `undefined`. */
  readonly queue: string | undefined;
  /** The Redis that could not be reached, for `redis_unreachable`; else `undefined`. */
  readonly address: string | undefined;

  constructor(
    readonly code: RemoteToolErrorCode,
    message: string,
    /** The BullMQ job it was ('' when no job was added: `redis_unreachable`, or a closed `remoteTools`). */
    readonly jobId: string,
    place: RemoteToolErrorPlace = {},
  ) {
    super(message);
    this.queue = place.queue;
    this.address = place.address;
  }
}

/** The codes a worker writes into a failed job's reason, `[code] text`, for the agent to read back. */
export type WorkerFailureCode = Exclude<RemoteToolErrorCode, 'job_lost' | 'result_unverified' | 'no_worker' | 'redis_unreachable'> | 'outcome_unknown';

export const WORKER_FAILURE_CODES: ReadonlySet<string> = new Set<WorkerFailureCode>(['tool_failed', 'invalid_args', 'unknown_tool', 'refused', 'timeout', 'cancelled', 'workers_lost', 'outcome_unknown']);

/** An unsigned failure reason: for data that names no call to sign for (another payload version, not a job). */
export function failureReason(code: WorkerFailureCode, text: string): string {
  return `[${code}] ${text}`;
}
