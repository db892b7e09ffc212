import { PendingAnswer, toAnswer } from '../../stream/answer.js';
import type { Abort } from '../../stream/abortScope.js';
import type { StartCheck } from '../../types/policy.js';
import { describeError, describeValue } from '../../util/describe.js';
import { Later, type MaybeLater } from '../../util/later.js';
import { failedHow } from './waterfall.js';

/** A check a pre-execute policy registered with `ctx.beforeStart`, and who registered it. */
export interface StartCheckEntry {
  readonly policy: string;
  readonly check: StartCheck;
}

/** Why a call must not start: a check denied it, or failed (fail closed). */
export type StartRefusal =
  | { readonly kind: 'deny'; readonly policy: string; readonly reason: string | undefined }
  | { readonly kind: 'failed'; readonly policy: string; readonly message: string; readonly cause: unknown };

/**
 * Runs a call's start checks in the order they were registered, on the arguments it is about to start
 * with, and gives the first refusal, or `undefined` when every check let it start. A check answers at
 * once, with a promise, or with a stream whose first value counts (see `toAnswer`). A check that
 * throws, rejects, errors, completes without answering or answers anything but `undefined`,
 * `{ decision: 'allow' }` or a deny is a failure.
 *
 * 1. While every check answers at once, the outcome is a value: no `Later`, no listener.
 * 2. When `scope` aborts (the checks timed out, the call was cancelled) while a check's stream is
 *    pending, the stream is unsubscribed; the outcome then never settles (whoever aborted answers the
 *    call). A promise cannot be stopped: its late answer is ignored the same way.
 *
 * Never throws or rejects.
 */
export function runStartChecks(entries: readonly StartCheckEntry[], args: unknown, scope: Abort): MaybeLater<StartRefusal | undefined> {
  const from = (i: number): MaybeLater<StartRefusal | undefined> => {
    for (; i < entries.length; i++) {
      const { policy, check } = entries[i]!;
      let answer: unknown;
      try {
        answer = toAnswer<unknown>(check(args, scope.signal));
      } catch (error) {
        return failed(policy, error);
      }
      if (answer instanceof Later) return waitFor(answer, policy, i);
      const refusal = judge(policy, answer);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  };
  /** Check `i` answers later: the rest run once it has, unless the scope stops it first. */
  const waitFor = (answer: Later<unknown>, policy: string, i: number): Later<StartRefusal | undefined> => {
    const unlisten = answer instanceof PendingAnswer ? scope.onAbort(() => answer.cancel()) : undefined;
    return answer.then(
      (verdict) => {
        unlisten?.();
        return judge(policy, verdict) ?? from(i + 1);
      },
      (error: unknown) => {
        unlisten?.();
        return failed(policy, error);
      },
    ) as Later<StartRefusal | undefined>;
  };
  return from(0);
}

/** A refusal for `verdict`, or `undefined` when it lets the call start. */
function judge(policy: string, verdict: unknown): StartRefusal | undefined {
  if (verdict === undefined) return undefined;
  let decision: unknown;
  let reason: unknown;
  try {
    ({ decision, reason } = verdict as { decision?: unknown; reason?: unknown });
  } catch (error) {
    return { kind: 'failed', policy, message: `answered a value that cannot be read: ${describeError(error)}`, cause: error };
  }
  if (decision === 'allow') return undefined;
  if (decision === 'deny' && (reason === undefined || typeof reason === 'string')) return { kind: 'deny', policy, reason };
  return { kind: 'failed', policy, message: `answered ${describeValue(verdict)}, which is not a start verdict`, cause: verdict };
}

/** The check threw, rejected, errored, or its stream completed without answering. */
function failed(policy: string, error: unknown): StartRefusal {
  return { kind: 'failed', policy, message: failedHow(error), cause: error };
}
