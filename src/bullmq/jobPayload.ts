import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { TraceCarrier } from '../types/traceContext.js';

/**
 * The payload format this build writes and verifies. Version 2 carries `attempt` and `expiresAt`, and
 * its workers sign what they send back (`OutcomeSigner`); a worker refuses any other version, saying
 * so, rather than run a job whose result its agent could not verify.
 */
export const PAYLOAD_VERSION = 2;

/**
 * What a remote tool's job carries (BullMQ's `job.data`): the call as the agent admitted it, and an
 * HMAC-SHA256 over it, the job's id and its queue with the fleet's shared secret. A worker runs nothing
 * whose signature does not check, so only a holder of the secret can have bodies run; a payload copied
 * under another id or queue (to run it twice, or on another resource) is refused too.
 */
export interface JobPayload {
  /** Format version: {@link PAYLOAD_VERSION}. */
  readonly v: typeof PAYLOAD_VERSION;
  readonly tool: string;
  /** The admitted arguments (the body's `args`: validated, rewritten by policies). */
  readonly args: unknown;
  readonly callId: string;
  readonly turn: string | null;
  readonly index: number;
  /** The call's `ctx.idempotencyKey` in the agent: the worker's `ctx` has the same. */
  readonly key: string;
  /** Which attempt of the call's body this is (the tool's `retry`): with `key`, what a run record is taken for. */
  readonly attempt: number;
  /** Epoch milliseconds after which the body is aborted; `null` for none. */
  readonly deadline: number | null;
  /**
   * Epoch milliseconds after which no worker starts the job: the deadline when there is one, else the
   * dispatch time plus `jobExpiryMs`. Always present, so a job replayed later never runs.
   */
  readonly expiresAt: number;
  /** How long the job's streamed items are kept, like the job itself (for re-attaching). */
  readonly keepMs: number;
  /**
   * The trace context of the call's body that sent the job (`traceCarrierOf(ctx)`: W3C `traceparent`,
   * `tracestate`), when the agent's pipeline traces; absent otherwise. Signed like the rest when
   * present: a copy of a job cannot be re-attributed to another trace, and the worker's span parents
   * only what the agent sent.
   */
  readonly tc?: TraceCarrier;
  /** base64url HMAC-SHA256 of the rest, the job id, the prefix and the queue. */
  readonly sig: string;
}

export type UnsignedPayload = Omit<JobPayload, 'sig'>;

interface Place {
  readonly jobId: string;
  readonly prefix: string;
  readonly queue: string;
}

/**
 * The MAC of a payload in its place. The signed text is `JSON.stringify` of the fields in a fixed order:
 * the worker receives `job.data` as BullMQ's JSON round trip of what was added, and JSON text is stable
 * under a round trip (the same keys in the same order, the same number forms), so both sides compute
 * the same text without sorting keys (a canonical form cost a tenth of a worker's time per job).
 */
function mac(secret: Buffer, payload: UnsignedPayload, place: Place): Buffer {
  const { v, tool, args, callId, turn, index, key, attempt, deadline, expiresAt, keepMs, tc } = payload;
  const fields = ['toolstream.job', v, tool, args, callId, turn, index, key, attempt, deadline, expiresAt, keepMs, place.jobId, place.prefix, place.queue];
  // The trace context is the last field, only when present: a payload without one signs the same text
  // as before it existed, so workers of the version before accept untraced jobs.
  const text = JSON.stringify(tc === undefined ? fields : [...fields, tc]);
  return createHmac('sha256', secret).update(text).digest();
}

export function signPayload(secret: Buffer, payload: UnsignedPayload, place: Place): JobPayload {
  return { ...payload, sig: mac(secret, payload, place).toString('base64url') };
}

/**
 * Why a job's data is not a payload of this format at all; `undefined` when it has the shape of one
 * (signed or not). A refusal for such data cannot name a call, so it is sent unsigned: only agents of
 * another version (or no agent) see it.
 */
export function shapeRefusal(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return 'its data is not a toolstream job';
  const payload = data as Partial<Record<keyof JobPayload, unknown>>;
  if (typeof payload.v === 'number' && payload.v !== PAYLOAD_VERSION) {
    return `its payload is format version ${payload.v}, and this worker verifies version ${PAYLOAD_VERSION} only (agents and workers of different toolstream versions, during an upgrade?)`;
  }
  if (
    payload.v !== PAYLOAD_VERSION ||
    typeof payload.tool !== 'string' ||
    typeof payload.callId !== 'string' ||
    typeof payload.index !== 'number' ||
    typeof payload.key !== 'string' ||
    typeof payload.attempt !== 'number' ||
    typeof payload.expiresAt !== 'number'
  ) {
    return 'its data is not a toolstream job (no tool, call id, index, idempotency key, attempt or expiry)';
  }
  return undefined;
}

/** Why a payload of the right shape was not signed by this fleet for this place; `undefined` when it was. */
export function signatureRefusal(secret: Buffer, payload: JobPayload, place: Place): string | undefined {
  if (typeof payload.sig !== 'string') return 'it is not signed';
  let expected: Buffer;
  try {
    expected = mac(secret, payload, place);
  } catch {
    return 'its arguments have no JSON form';
  }
  const given = Buffer.from(payload.sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return 'its signature does not match (another secret, or data, id or queue changed after signing)';
  }
  return undefined;
}

/** Why a job's data is not a payload this fleet signed; `undefined` when it is one. */
export function refusal(secret: Buffer, data: unknown, place: Place): string | undefined {
  return shapeRefusal(data) ?? signatureRefusal(secret, data as JobPayload, place);
}

/**
 * The id of a durable call's job: the same for every run and resume of the call, so a resumed turn's
 * `add` finds the job that exists (BullMQ ignores an add whose id exists) and waits for it. A hash of
 * turn and slot: no `:` (BullMQ's separator), never an integer (BullMQ's own ids). A retry (the tool's
 * `retry`, attempt 2 on) is a new job, `-a<attempt>` after the id: attempt 1 keeps the id a resumed turn
 * re-attaches to.
 */
export function durableJobId(turn: string, index: number, attempt = 1): string {
  const id = `tsd-${createHash('sha256').update(`${turn}\u0000${index}`).digest('base64url')}`;
  return attempt > 1 ? `${id}-a${attempt}` : id;
}
