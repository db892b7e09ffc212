import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * What a remote tool's job carries (BullMQ's `job.data`): the call as the agent admitted it, and an
 * HMAC-SHA256 over it, the job's id and its queue with the fleet's shared secret. A worker runs nothing
 * whose signature does not check, so only a holder of the secret can have bodies run; a payload copied
 * under another id or queue (to run it twice, or on another resource) is refused too.
 */
export interface JobPayload {
  /** Format version. */
  readonly v: 1;
  readonly tool: string;
  /** The admitted arguments (the body's `args`: validated, rewritten by policies). */
  readonly args: unknown;
  readonly callId: string;
  readonly turn: string | null;
  readonly index: number;
  /** The call's `ctx.idempotencyKey` in the agent: the worker's `ctx` has the same. */
  readonly key: string;
  /** Epoch milliseconds after which the body is aborted (and not started); `null` for none. */
  readonly deadline: number | null;
  /** How long the job's streamed items are kept, like the job itself (for re-attaching). */
  readonly keepMs: number;
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
  const { v, tool, args, callId, turn, index, key, deadline, keepMs } = payload;
  const text = JSON.stringify([v, tool, args, callId, turn, index, key, deadline, keepMs, place.jobId, place.prefix, place.queue]);
  return createHmac('sha256', secret).update(text).digest();
}

export function signPayload(secret: Buffer, payload: UnsignedPayload, place: Place): JobPayload {
  return { ...payload, sig: mac(secret, payload, place).toString('base64url') };
}

/** Why a job's data is not a payload this fleet signed; `undefined` when it is one. */
export function refusal(secret: Buffer, data: unknown, place: Place): string | undefined {
  if (typeof data !== 'object' || data === null) return 'its data is not a toolstream job';
  const payload = data as Partial<JobPayload>;
  if (payload.v !== 1 || typeof payload.tool !== 'string' || typeof payload.callId !== 'string' || typeof payload.index !== 'number' || typeof payload.key !== 'string') {
    return 'its data is not a toolstream job (no tool, call id, index or idempotency key)';
  }
  if (typeof payload.sig !== 'string') return 'it is not signed';
  let expected: Buffer;
  try {
    expected = mac(secret, payload as UnsignedPayload, place);
  } catch {
    return 'its arguments have no JSON form';
  }
  const given = Buffer.from(payload.sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return 'its signature does not match (another secret, or data, id or queue changed after signing)';
  }
  return undefined;
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
