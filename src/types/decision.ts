// What a result records about its policies: the folded decision and the trace. (A leaf: imports only from types/.)
import type { AttemptError } from './retry.js';

/** A pre-execute verdict. Strictness: `deny` > `ask` > `allow`. */
export type Decision = 'allow' | 'ask' | 'deny';

/**
 * One event of a call's policy trace, in the order it happened: decisions as the pre-execute chain
 * unwound (innermost first), refused relaxations, argument rewrites, failures, the approver's answer,
 * a denial (or failure) of a check before the body's start, each failed attempt of a retried body
 * (`stage: 'execute'`, `event: 'attempt_failed'`: its error and the delay before the next), a failure
 * of execute middleware (`stage: 'execute'`, `event: 'failed'`), post-execute verdicts, and a failure
 * of result middleware (`stage: 'result'`), and a retry refused inside a chain (`event: 'retry_refused'`:
 * a member subscribed again to what `next()` gave after it failed — the rest of a chain never runs
 * twice; the retry got the same error).
 *
 * @example
 * ```ts
 * for (const entry of result.trace) {
 *   if (entry.event === 'relax_refused') console.warn(`${entry.policy} tried ${entry.from} → ${entry.to}`);
 * }
 * ```
 */
export type TraceEntry =
  | { readonly stage: 'pre'; readonly event: 'decision'; readonly policy: string; readonly decision: Decision; readonly reason: string | undefined }
  | { readonly stage: 'pre'; readonly event: 'rewrite'; readonly policy: string }
  | { readonly stage: 'pre' | 'post'; readonly event: 'relax_refused'; readonly policy: string; readonly from: string; readonly to: string }
  | { readonly stage: 'pre' | 'execute' | 'post' | 'result'; readonly event: 'failed'; readonly policy: string; readonly message: string }
  | { readonly stage: 'pre' | 'execute' | 'post' | 'result'; readonly event: 'retry_refused'; readonly policy: string }
  | { readonly stage: 'approval'; readonly event: 'answer'; readonly answer: string }
  | { readonly stage: 'start'; readonly event: 'decision'; readonly policy: string; readonly decision: 'deny'; readonly reason: string | undefined }
  | { readonly stage: 'start'; readonly event: 'failed'; readonly policy: string; readonly message: string }
  | { readonly stage: 'post'; readonly event: 'accept' | 'block'; readonly policy: string }
  | { readonly stage: 'execute'; readonly event: 'attempt_failed'; readonly attempt: number; readonly error: AttemptError; readonly delayMs: number };
