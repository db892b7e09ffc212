import type { SchedulerLike, Subscription } from 'rxjs';
import { describeError, describeValue } from '../../util/describe.js';
import type { AbortScope } from '../../types/abortScope.js';
import type { ApprovalRequest, Approver } from '../../types/policy.js';
import type { ApprovalError } from '../../types/toolError.js';

/** Approved, suspended (to be answered later), or the code and message of the denial. */
export type ApprovalOutcome =
  | { readonly approved: true }
  | { readonly approved: false; readonly suspended: true }
  | { readonly approved: false; readonly suspended?: undefined; readonly code: ApprovalError['code']; readonly message: string };

/**
 * Asks `approver` about one call and settles on the first of: its answer, the stage stopping, or
 * `timeoutMs` passing. Only an explicit `'allowed-once'` approves; everything else denies with a code
 * that says why. The approver's own signal aborts on timeout too, so it can stop asking. Never rejects,
 * and leaves no timer or listener behind.
 */
export function requestApproval(
  approver: Approver | undefined,
  request: ApprovalRequest,
  scope: AbortScope,
  timeoutMs: number | undefined,
  scheduler: SchedulerLike,
): Promise<ApprovalOutcome> {
  const denied = (code: ApprovalError['code'], why: string): ApprovalOutcome => ({
    approved: false,
    code,
    message: `Denied: calling "${request.tool.name}" needs approval, and ${why}.`,
  });
  if (approver === undefined) return Promise.resolve(denied('approval_unavailable', 'no approver is configured'));
  if (scope.aborted) return Promise.resolve(denied('approval_aborted', 'the run was aborted'));

  return new Promise<ApprovalOutcome>((resolve) => {
    const asking = new AbortController();
    let settled = false;
    let unlisten: () => void = () => undefined;
    let timer: Subscription | undefined;
    const settle = (outcome: ApprovalOutcome) => {
      if (settled) return;
      settled = true;
      unlisten();
      timer?.unsubscribe();
      if (!outcome.approved) asking.abort(new DOMException(outcome.suspended ? 'the call was suspended' : outcome.message, 'AbortError'));
      resolve(outcome);
    };
    const onAbort = () => settle(denied('approval_aborted', 'the run was aborted before an answer came'));
    unlisten = scope.onAbort(onAbort);
    if (timeoutMs !== undefined) {
      timer = scheduler.schedule(() => settle(denied('approval_timeout', `no answer came within ${timeoutMs} ms`)), timeoutMs);
    }

    const onAnswer = (answer: unknown) => {
      if (answer === 'allowed-once') settle({ approved: true });
      else if (answer === 'suspend') settle({ approved: false, suspended: true });
      else if (answer === 'rejected') settle(denied('approval_rejected', 'the approver rejected it'));
      else settle(denied('approval_invalid', `the approver answered ${describeValue(answer)}, not "allowed-once"`));
    };
    const onError = (error: unknown) => settle(denied('approval_error', `the approver failed: ${describeError(error)}`));
    try {
      Promise.resolve(approver(request, asking.signal)).then(onAnswer, onError);
    } catch (error) {
      onError(error);
    }
  });
}
