import { sha256Base64Url } from '../../util/digest.js';
import type { CallRecord } from '../records/callRecord.js';
import { CALL_NAME } from '../records/callSlots.js';

/**
 * The idempotency key of a call (`ctx.idempotencyKey`): a hash, the same for every attempt of the call
 * and derived only from what names it —
 * - if a layer named the call (`CALL_NAME`; a durable turn: its journal key and slot), that name: the
 *   same after a resume in any process;
 * - else, with a turn, the turn and the call id: the same wherever the call is run again with them;
 * - else, the subscription (a random id, drawn on first use) and the call id: stable across retries
 *   within that subscription only.
 * `tsk-` and base64url: no `:`, safe in a header or a job id.
 */
export function idempotencyKeyOf(record: CallRecord, subscription: () => string): string {
  const named = record.get(CALL_NAME) ?? (record.turn !== undefined ? ['turn', record.turn, record.id] : ['subscription', subscription(), record.id]);
  return `tsk-${sha256Base64Url(JSON.stringify(named))}`;
}
