import type { SchedulerLike, Subscription } from 'rxjs';
import { isNoAnswer, PendingAnswer, toAnswer } from '../../stream/answer.js';
import { describeError, describeValue } from '../../util/describe.js';
import { Later, type MaybeLater } from '../../util/later.js';
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
 * `timeoutMs` passing (on `scheduler`: virtual time too). Only an explicit `'allowed-once'` approves;
 * everything else denies with a code that says why.
 *
 * 1. The approver answers at once, with a promise, or with a stream whose first value counts (see
 *    `toAnswer`). An answer given at once is the outcome at once, as a value: no timer, no listener.
 * 2. A pending answer races the stop and the timer; whichever comes first settles it, the moment it
 *    comes (a `Later`). On a stop or a timeout the approver's stream is unsubscribed (a promise's late
 *    answer is ignored).
 * 3. A stream that completes without a value denies (`approval_invalid`); one that errors, a throw
 *    and a rejection deny with `approval_error`.
 * 4. The approver's own signal aborts whenever the call is not approved (a denial, a timeout, a stop,
 *    a suspension), so it can stop asking.
 *
 * Never throws or rejects, and leaves no timer, listener or subscription behind.
 */
export function requestApproval(
  approver: Approver | undefined,
  request: ApprovalRequest,
  scope: AbortScope,
  timeoutMs: number | undefined,
  scheduler: SchedulerLike,
): MaybeLater<ApprovalOutcome> {
  const denied = (code: ApprovalError['code'], why: string): ApprovalOutcome => ({
    approved: false,
    code,
    message: `Denied: calling "${request.tool.name}" needs approval, and ${why}.`,
  });
  if (approver === undefined) return denied('approval_unavailable', 'no approver is configured');
  const aborted = () => denied('approval_aborted', 'the run was aborted before an answer came');
  if (scope.aborted) return denied('approval_aborted', 'the run was aborted');

  const asking = new AbortController();
  /** The outcome, told to the approver's signal when it is not an approval. */
  const told = (outcome: ApprovalOutcome): ApprovalOutcome => {
    if (!outcome.approved) asking.abort(new DOMException(outcome.suspended ? 'the call was suspended' : outcome.message, 'AbortError'));
    return outcome;
  };
  const answered = (answer: unknown): ApprovalOutcome => {
    if (answer === 'allowed-once') return { approved: true };
    if (answer === 'suspend') return { approved: false, suspended: true };
    if (answer === 'rejected') return denied('approval_rejected', 'the approver rejected it');
    return denied('approval_invalid', `the approver answered ${describeValue(answer)}, not "allowed-once"`);
  };
  const failed = (error: unknown): ApprovalOutcome => {
    if (isNoAnswer(error)) return denied('approval_invalid', 'the approver completed without an answer');
    return denied('approval_error', `the approver failed: ${describeError(error)}`);
  };

  let answer: unknown;
  try {
    answer = toAnswer<unknown>(approver(request, asking.signal));
  } catch (error) {
    return told(scope.aborted ? aborted() : failed(error));
  }
  // The run was aborted while the approver was being asked: the answer no longer matters.
  if (scope.aborted) {
    if (answer instanceof PendingAnswer) answer.cancel();
    return told(aborted());
  }
  if (!(answer instanceof Later)) return told(answered(answer));

  const outcome = new Later<ApprovalOutcome>();
  let unlisten: (() => void) | undefined;
  let timer: Subscription | undefined;
  const settle = (settled: ApprovalOutcome) => {
    if (outcome.settled) return;
    unlisten?.();
    timer?.unsubscribe();
    if (answer instanceof PendingAnswer) answer.cancel(); // a no-op once it answered
    outcome.resolve(told(settled));
  };
  answer.then(
    (value) => settle(answered(value)),
    (error: unknown) => settle(failed(error)),
  );
  if (outcome.settled) return outcome;
  unlisten = scope.onAbort(() => settle(aborted()));
  if (timeoutMs !== undefined && !outcome.settled) {
    timer = scheduler.schedule(() => settle(denied('approval_timeout', `no answer came within ${timeoutMs} ms`)), timeoutMs);
  }
  return outcome;
}
