import type { CallView } from './callView.js';
import type { ExecuteMiddleware } from './execute.js';
import type { JournaledResult } from './journal.js';
import type { PendingApproval } from './pendingApproval.js';
import type { UnknownOutcome } from './outcome.js';
import type { AttemptError } from './retry.js';
import type { ApprovalPendingError } from './toolError.js';
import type { ToolResult } from './toolResult.js';

/**
 * The moments of a call's life a layer may watch, called by the engine at fixed points (the engine
 * owns the lifecycle, a layer registers hooks and never reaches into it — as Fastify's hooks). Every
 * hook is optional and synchronous; the engine calls a run's hooks in the order the layers were
 * registered. A hook must not throw: the events layer, the one that uses them today, catches what its
 * observers throw itself. Besides the moments, a layer may wrap each attempt of its run's calls with
 * execute middleware of its own (`execute`: the journal's write-ahead `started`).
 *
 * ```
 * intake ─► received ─► pre chain ─► decided ─► guard ─► [approvalRequested ─► approvalAnswered]
 *   ─► admission ─► slot ─► start checks ─► started ─► layers' execute ─► execute chain ─► body ─► [progress]*
 *   ─► [retry ─► layers' execute ─► execute chain ─► body]* ─► post chain ─► result chain ─► result ─► finished ─► reorder
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
  /**
   * After intake, before any policy (also for a call that intake failed). May return a verdict that
   * settles the call (a resume's journal: see {@link ReceivedVerdict}); the engine applies it before the
   * next layer's `received`, so later layers see the call settled. The first verdict wins.
   */
  readonly received?: (call: CallView) => ReceivedVerdict | void;
  /** The pre-execute chain has run (also when the call was finished before it: look at `call.status`). */
  readonly decided?: (call: CallView) => void;
  /** The guard is about to ask the approver. */
  readonly approvalRequested?: (call: CallView, reasons: readonly string[]) => void;
  /** The approver answered, or the question timed out or was withdrawn (`answer`: `allowed-once`, `suspend`, or the denial's code). */
  readonly approvalAnswered?: (call: CallView, approved: boolean, answer: string) => void;
  /**
   * Not a moment but a contribution: the approver answered `'suspend'` (right after `approvalAnswered`),
   * and a layer that can keep the call waiting for a human's answer given to `resume` — a durable turn's
   * journal — records its pending approval (a signed token) and returns it; the call is then
   * `suspended` (`approval_pending`). The run's layers are asked in registration order until one
   * returns an approval; when none does (no such layer, or it cannot sign the arguments) the call
   * fails closed, `denied`, `approval_unavailable`.
   */
  readonly suspend?: (call: CallView) => PendingApproval | undefined;
  /** The pool started the call's first attempt: its execute chain, or its body if it has none (`call.startedAt` is when). */
  readonly started?: (call: CallView) => void;
  /** The body called `ctx.progress(value)`. */
  readonly progress?: (call: CallView, value: unknown) => void;
  /** An attempt failed and attempt `attempt + 1` starts after `delayMs`. */
  readonly retry?: (call: CallView, attempt: number, error: AttemptError, delayMs: number) => void;
  /**
   * The result is built (after the post-execute and result chains), in completion order, before reordering. A
   * returned promise holds the result back until it settles, and the hooks of later layers run once it
   * settled; results go on in the order their hooks settled (a journal's promises settle in the order
   * its entries were written, so its results keep completion order). A rejection errors the run with
   * its reason (the journal's `journal_failed`, `lease_lost`): no result is given out after it, and the
   * error waits for the calls still in flight. Returning nothing passes the result on at once.
   */
  readonly finished?: (result: ToolResult) => void | PromiseLike<void>;
  /**
   * Not a moment but a wrap: the layer's own execute middleware, run around each attempt of each call
   * of its run, outside the pipeline's `execute` and the tool's `chains.execute` (the layers' in
   * registration order, the first outermost). Like theirs it runs in the call's slot, after the start
   * checks, within the attempt's time limit, and once per attempt (`ctx.attempt`); the rules of
   * {@link ExecuteMiddleware} hold: a failure of its own fails the call closed — `denied`,
   * `policy_error`, `stage: 'execute'` when no body ran — and the body never runs without its `next()`.
   * Its name in a failure's trace and message is the function's name. The durable journal's: before
   * the first attempt it writes the call's `started`, and before every attempt it waits until what it
   * wrote is durable and its lease is known live.
   */
  readonly execute?: ExecuteMiddleware;
}

/**
 * What a `received` hook may answer instead of letting a call go on to the policies: its outcome, known
 * already. Only a resume's journal gives verdicts (decision D1 of issue 25: no policy and no approver sees
 * a call a resume settles). The engine applies it to the call:
 * - `replay`: the journaled result, as the model saw it the first time (status, content, value or error,
 *   `started`); final — the post-execute chain passes it untouched and the body never runs.
 * - `in-place`: the call started before a crash and may not run again: it waits for its turn in the
 *   pool like any call and fails there with `outcome` (`outcome.unknown(message)`: `outcome_unknown`),
 *   as a body ending with that outcome would (an exclusive one cancels the rest of its turn unless
 *   `onError` says otherwise).
 * - `suspended`: the call still waits for a human's answer (`approval_pending`), holding its place.
 *
 * @example
 * ```ts
 * const replayFinished: CallHooks = {
 *   received: (call) => (call.index === 0 ? { kind: 'replay', result: { status: 'ok', content: '42', value: 42, started: true } } : undefined),
 * };
 * ```
 */
export type ReceivedVerdict =
  | { readonly kind: 'replay'; readonly result: JournaledResult }
  | { readonly kind: 'in-place'; readonly outcome: UnknownOutcome }
  | { readonly kind: 'suspended'; readonly error: ApprovalPendingError };
