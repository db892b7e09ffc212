import type { StartCheck } from '../../types/policy.js';
import { describeError, describeValue } from '../../util/describe.js';

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
 * with, and resolves to the first refusal, or `undefined` when every check let it start. A check that
 * throws, rejects or answers anything but `undefined`, `{ decision: 'allow' }` or a deny is a failure.
 * Never rejects.
 */
export async function runStartChecks(
  entries: readonly StartCheckEntry[],
  args: unknown,
  signal: AbortSignal,
): Promise<StartRefusal | undefined> {
  for (const { policy, check } of entries) {
    let verdict: unknown;
    try {
      verdict = await check(args, signal);
    } catch (error) {
      return { kind: 'failed', policy, message: `threw: ${describeError(error)}`, cause: error };
    }
    if (verdict === undefined) continue;
    let decision: unknown;
    let reason: unknown;
    try {
      ({ decision, reason } = verdict as { decision?: unknown; reason?: unknown });
    } catch (error) {
      return { kind: 'failed', policy, message: `answered a value that cannot be read: ${describeError(error)}`, cause: error };
    }
    if (decision === 'allow') continue;
    if (decision === 'deny' && (reason === undefined || typeof reason === 'string')) return { kind: 'deny', policy, reason };
    return { kind: 'failed', policy, message: `answered ${describeValue(verdict)}, which is not a start verdict`, cause: verdict };
  }
  return undefined;
}
