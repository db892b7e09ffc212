import type { ToolContract } from '../tool/toolContract.js';
import type { ToolContext } from '../types/tool.js';
import { traceCarrierOf } from '../util/traceCarrier.js';
import { PAYLOAD_VERSION, signPayload, type JobPayload, type UnsignedPayload } from './jobPayload.js';

/** Where a dispatched job goes, and which attempt of its call it is. */
export interface DispatchPlace {
  readonly jobId: string;
  readonly prefix: string;
  readonly queue: string;
  readonly attempt: number;
}

/** What an agent's fleet signs every job with, and how long its jobs live. */
export interface DispatchTerms {
  readonly secret: Buffer;
  /** A job's signed expiry when its contract has no `timeoutMs`. */
  readonly jobExpiryMs: number;
  /** How long its finished job and streamed items are kept. */
  readonly keepJobsMs: number;
}

/**
 * The signed payload of the job that runs one call's body on a worker (`remoteTools`' dispatch): the
 * call as the agent admitted it, a deadline from the contract's `timeoutMs` (none without one), an
 * expiry — the deadline, or `jobExpiryMs` from now — and the trace context of the call's body, when
 * the pipeline traces.
 */
export function dispatchPayload(contract: ToolContract, args: unknown, ctx: ToolContext, place: DispatchPlace, terms: DispatchTerms): JobPayload {
  const now = Date.now();
  const timeoutMs = contract.timeoutMs;
  const deadline = timeoutMs === undefined || timeoutMs === Infinity ? null : now + timeoutMs;
  const tc = traceCarrierOf(ctx);
  const unsigned: UnsignedPayload = {
    v: PAYLOAD_VERSION,
    tool: contract.name,
    args,
    callId: ctx.callId,
    turn: ctx.turn ?? null,
    index: ctx.index,
    key: ctx.idempotencyKey,
    attempt: place.attempt,
    deadline,
    expiresAt: deadline ?? now + terms.jobExpiryMs,
    keepMs: terms.keepJobsMs,
    ...(tc === undefined ? {} : { tc }),
  };
  return signPayload(terms.secret, unsigned, { jobId: place.jobId, prefix: place.prefix, queue: place.queue });
}
