import { identity, type MonoTypeOperatorFunction } from 'rxjs';
import type { GuardSettings } from '../settings.js';
import { requestApproval } from '../../tool/policy/requestApproval.js';
import type { CallRecord } from '../records/callRecord.js';
import type { BatchCancel } from '../records/batchCancel.js';
import { concurrentStage, isExclusiveCall, type StageScope } from '../chains/concurrentStage.js';
import type { PendingApproval } from '../../types/pendingApproval.js';
import type { ToolError } from '../../types/toolError.js';
import { allowsEveryCall } from './preExecute.js';
import { thenOrNow, type MaybeLater } from '../../util/later.js';

/**
 * The guard stage: enforces the decision pre-execute folded for each call. Nothing that is not allowed
 * reaches the execute stage as runnable.
 *
 * - `allow` → passes on.
 * - `deny` → a `denied` result (`code: 'denied'`, naming the policy and its reasons); the tool never runs.
 * - `ask` → the approver is asked; only `'allowed-once'` lets the call through, and only this call: the
 *   next call to the same tool asks again (nothing is remembered). No approver, a throw, another answer,
 *   or `approvalTimeoutMs` passing → `denied` with an `approval_*` code saying which. If the batch is
 *   cancelled meanwhile (cancel-rest, the run's signal), the question is withdrawn (the approver's
 *   signal aborts) and the call is `cancelled`.
 * Approvals of several calls may be pending at once; an exclusive call still keeps its place (see
 * `concurrentStage`), so an approval never lets it run out of order. With no policies and
 * `defaultDecision: 'allow'` the stage is the identity.
 *
 * @example
 * ```ts
 * records$.pipe(preExecute(settings, batch), guard(settings, batch));
 * ```
 */
export function guard(settings: GuardSettings, batch: BatchCancel): MonoTypeOperatorFunction<CallRecord> {
  if (allowsEveryCall(settings)) return identity;
  const { approve, approvalTimeoutMs, scheduler } = settings;

  const enforce = (record: CallRecord, stage: StageScope): MaybeLater<void> => {
    if (record.status !== undefined) return;
    const cancelled = batch.cancellationOf(record);
    if (cancelled !== undefined) return record.cancel(cancelled); // nobody is asked for a cancelled turn
    const { decision, decidedBy: policy, reasons } = record;
    if (decision === 'allow') {
      record.decidedAt = record.clock();
      return;
    }
    if (decision !== 'ask') {
      // 'deny' — or no decision at all, which only a broken pre-execute stage could leave: fail closed.
      const why = reasons.length > 0 ? `: ${reasons.join('; ')}` : '';
      record.fail('denied', { code: 'denied', message: `Denied by policy "${policy}"${why}.`, policy, reasons, stage: 'pre' });
      return;
    }
    const request = Object.freeze({
      call: Object.freeze({ id: record.id, name: record.name, args: record.rawArgs }),
      tool: record.tool!,
      args: record.args,
      index: record.index,
      reasons,
    });
    record.hooks?.approvalRequested(record, reasons);
    // At once when the approver answered at once; else the moment its answer (or the timeout) comes.
    return thenOrNow(requestApproval(approve, request, batch.scopeFor(stage, record), approvalTimeoutMs, scheduler), (outcome) => {
      const answer = outcome.approved ? 'allowed-once' : outcome.suspended ? 'suspend' : outcome.code;
      record.addTrace({ stage: 'approval', event: 'answer', answer });
      record.hooks?.approvalAnswered(record, outcome.approved, answer);
      if (outcome.approved) {
        record.decidedAt = record.clock();
        return;
      }
      if (outcome.suspended) return suspend(record, reasons);
      // The question stopped mattering: the turn was cancelled while it was pending.
      const cancellation = outcome.code === 'approval_aborted' ? batch.cancellationOf(record) : undefined;
      if (cancellation !== undefined) record.cancel(cancellation);
      else record.fail('denied', { code: outcome.code, message: outcome.message, reasons });
    });
  };

  /** The approver answered 'suspend': the call waits for an answer given to `resume` — if a layer of its run keeps it (`CallHooks.suspend`). */
  const suspend = (record: CallRecord, reasons: readonly string[]): void => {
    const approval = record.hooks?.suspend(record); // a layer's (a durable turn's journal), if any
    if (approval === undefined) {
      const message = `Denied: calling "${record.name}" needs approval, and the approver suspended it; suspending needs a durable turn (createPipeline({ journal }), run(calls, { turn })), so the call fails closed.`;
      return record.fail('denied', { code: 'approval_unavailable', message, reasons });
    }
    record.fail('suspended', approvalPending(record.name, reasons, approval));
  };

  return concurrentStage(enforce, isExclusiveCall, batch.signal);
}

/** The error of a call suspended on `approval`: it waits for a human's answer, given to `resume`. */
export function approvalPending(name: string, reasons: readonly string[], approval: PendingApproval): Extract<ToolError, { code: 'approval_pending' }> {
  const why = reasons.length > 0 ? ` (${reasons.join('; ')})` : '';
  return { code: 'approval_pending', message: `Suspended: calling "${name}" waits for a human's approval${why}.`, approval };
}
