import type { CallRecord } from '../records/callRecord.js';
import type { StartRefusal } from './startChecks.js';

/**
 * Answers a call that a start check refused (see `runStartChecks`): `denied`, by the policy's decision,
 * or because the check failed (policies fail closed). Traced as the start stage's decision or failure.
 *
 * @example
 * ```ts
 * const refusal = await runStartChecks(record.startChecks, record.args, signal);
 * if (refusal !== undefined) refuseStart(record, refusal);
 * ```
 */
export function refuseStart(record: CallRecord, refusal: StartRefusal): void {
  record.decision = 'deny';
  const { policy } = refusal;
  if (refusal.kind === 'deny') {
    const { reason } = refusal;
    record.addTrace({ stage: 'start', event: 'decision', policy, decision: 'deny', reason });
    const why = reason === undefined ? '' : `: ${reason}`;
    const reasons = reason === undefined ? [] : [reason];
    record.fail('denied', { code: 'denied', message: `Denied before it started, by policy "${policy}"${why}.`, policy, reasons, stage: 'start' });
    return;
  }
  const { message, cause } = refusal;
  record.addTrace({ stage: 'start', event: 'failed', policy, message });
  const text = `Denied: the start check of policy "${policy}" ${message} (policies fail closed).`;
  record.fail('denied', { code: 'policy_error', message: text, stage: 'start', policy, cause });
}
