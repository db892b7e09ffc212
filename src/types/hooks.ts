import type { CallView } from './callView.js';
import type { AttemptError } from './retry.js';
import type { ToolResult } from './toolResult.js';

/**
 * The moments of a call's life a layer may watch, called by the engine at fixed points (the engine
 * owns the lifecycle, a layer registers hooks and never reaches into it — as Fastify's hooks). Every
 * hook is optional and synchronous; the engine calls a run's hooks in the order the layers were
 * registered. A hook must not throw: the events layer, the one that uses them today, catches what its
 * observers throw itself.
 *
 * ```
 * intake ─► received ─► pre chain ─► decided ─► guard ─► [approvalRequested ─► approvalAnswered]
 *   ─► admission ─► slot ─► start checks ─► started ─► execute chain ─► body ─► [progress]*
 *   ─► [retry ─► execute chain ─► body]* ─► post chain ─► result chain ─► result ─► finished ─► reorder
 * ```
 *
 * With no hooks in a run the engine pays one property read at each point.
 *
 * @example
 * ```ts
 * const slow: CallHooks = {
 *   started: (call) => console.log(`${call.name} ${call.id} started`),
 *   retry: (call, attempt, error, delayMs) => console.log(`${call.id}: attempt ${attempt} failed (${error.code}), again in ${delayMs} ms`),
 * };
 * ```
 */
export interface CallHooks {
  /** After intake, before any policy (also for a call that intake failed, or a resumed call already answered). */
  readonly received?: (call: CallView) => void;
  /** The pre-execute chain has run (also when the call was finished before it: look at `call.status`). */
  readonly decided?: (call: CallView) => void;
  /** The guard is about to ask the approver. */
  readonly approvalRequested?: (call: CallView, reasons: readonly string[]) => void;
  /** The approver answered, or the question timed out or was withdrawn (`answer`: `allowed-once`, `suspend`, or the denial's code). */
  readonly approvalAnswered?: (call: CallView, approved: boolean, answer: string) => void;
  /** The pool started the call's first attempt: its execute chain, or its body if it has none (`call.startedAt` is when). */
  readonly started?: (call: CallView) => void;
  /** The body called `ctx.progress(value)`. */
  readonly progress?: (call: CallView, value: unknown) => void;
  /** An attempt failed and attempt `attempt + 1` starts after `delayMs`. */
  readonly retry?: (call: CallView, attempt: number, error: AttemptError, delayMs: number) => void;
  /** The result is built (after the post-execute and result chains), in completion order, before reordering. */
  readonly finished?: (result: ToolResult) => void;
}
