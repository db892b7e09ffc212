import { brand } from '../internal/brand.js';

/**
 * Why a remote tool's job failed, as its call's result tells it (`result.error.cause` of a `tool_error`):
 * - `'tool_failed'`: the body threw, rejected or its stream errored on the worker (`message` is its text);
 * - `'invalid_args'`: the worker's schema rejected the arguments (`message` lists the issues);
 * - `'unknown_tool'`: no worker tool of that name on the queue;
 * - `'refused'`: the worker refused the job (not signed with its secret, or changed after signing);
 * - `'timeout'`: the job's deadline passed on the worker;
 * - `'cancelled'`: the job was cancelled before or while its body ran;
 * - `'job_failed'`: BullMQ failed the job itself (e.g. an idempotent job that stalled twice);
 * - `'job_lost'`: the job is gone from Redis (removed, expired, or Redis lost its data).
 * A worker that died mid-body of a non-idempotent job gives no `RemoteToolError`: the call's result is
 * `outcome_unknown`.
 */
export type RemoteToolErrorCode = 'tool_failed' | 'invalid_args' | 'unknown_tool' | 'refused' | 'timeout' | 'cancelled' | 'job_failed' | 'job_lost';

/**
 * A remote tool's job failed: what its body throws in the agent, so the call's result is a `tool_error`
 * whose message is the worker's text and whose `cause` is this error, discriminated on `code`.
 *
 * @example
 * ```ts
 * const [result] = await pipeline.run(calls);
 * if (result.status === 'error' && result.error.code === 'tool_error' && result.error.cause instanceof RemoteToolError) {
 *   if (result.error.cause.code === 'refused') alert('the workers have another secret');
 * }
 * ```
 */
export class RemoteToolError extends Error {
  static {
    brand(this, 'RemoteToolError');
  }

  override readonly name = 'RemoteToolError';
  constructor(
    readonly code: RemoteToolErrorCode,
    message: string,
    /** The BullMQ job it was. */
    readonly jobId: string,
  ) {
    super(message);
  }
}

/** The codes a worker writes into a failed job's reason, `[code] text`, for the agent to read back. */
export type WorkerFailureCode = Exclude<RemoteToolErrorCode, 'job_failed' | 'job_lost'> | 'outcome_unknown';

const CODES: ReadonlySet<string> = new Set<WorkerFailureCode>(['tool_failed', 'invalid_args', 'unknown_tool', 'refused', 'timeout', 'cancelled', 'outcome_unknown']);

export function failureReason(code: WorkerFailureCode, text: string): string {
  return `[${code}] ${text}`;
}

/** A failed job's reason, read back: ours (`[code] text`), or BullMQ's own (`job_failed`). */
export function readFailure(reason: string): { readonly code: WorkerFailureCode | 'job_failed'; readonly text: string } {
  const match = /^\[([a-z_]+)\] ([\s\S]*)$/.exec(reason);
  if (match !== null && CODES.has(match[1]!)) return { code: match[1] as WorkerFailureCode, text: match[2]! };
  return { code: 'job_failed', text: reason };
}
