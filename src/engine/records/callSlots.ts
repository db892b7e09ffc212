import type { CallKey } from '../../types/slots.js';
import type { ToolContext } from '../../types/tool.js';
import { callKey, slotsOf } from '../../util/slots.js';

// The engine's own slot keys. Every other key belongs to a layer; the engine stores those values with
// the call (`CallRecord.set`/`get`) and never reads them.

/**
 * What names the call stably across processes and resumes, hashed as it is into `ctx.idempotencyKey`.
 * Set by a layer that runs a call again elsewhere or later under the same name (a durable turn:
 * `['durable', journal key, slot]`); unset, the key comes from the turn and the call id.
 *
 * @example
 * ```ts
 * record.set(CALL_NAME, ['durable', turn, slot]);
 * ```
 */
export const CALL_NAME: CallKey<readonly (string | number)[]> = callKey<readonly (string | number)[]>('toolstream.callName');

/**
 * Which attempt of its call's body a `ctx` was made for: 1 for the first, more when the tool's `retry`
 * ran it again. Answered by the engine from the call itself on the body's side (`attemptOf`), so
 * nothing is stored for it; a layer may not set it.
 *
 * @example
 * ```ts
 * const attempt = slotsOf(ctx)?.get(ATTEMPT) ?? 1;
 * ```
 */
export const ATTEMPT: CallKey<number> = callKey<number>('toolstream.attempt');

/**
 * Which attempt of its call's body `ctx` was made for (1 unless the tool's `retry` ran it again, and for
 * a `ctx` the pipeline did not make).
 *
 * @example
 * ```ts
 * const jobId = `${turn}:${index}:${attemptOf(ctx)}`;
 * ```
 */
export function attemptOf(ctx: ToolContext): number {
  return slotsOf(ctx)?.get(ATTEMPT) ?? 1;
}
