// Why a call produced no `ok` result: the `ToolError` union. (A leaf: imports only from types/.)
import type { PendingApproval } from './pendingApproval.js';

/**
 * Why a call did not produce an `ok` result: a discriminated union on `code`.
 *
 * Every variant carries a `message` written for the model (so it can correct itself) and typed fields
 * for programs. Intake codes mean the tool never ran; execution codes mean it ran (or was about to).
 *
 * | code             | status      | when                                                         |
 * |------------------|-------------|--------------------------------------------------------------|
 * | `invalid_call`   | `error`     | the call is not a `{ id, name, args }` object                 |
 * | `duplicate_id`   | `error`     | an earlier call of the same subscription had this id          |
 * | `unknown_tool`   | `error`     | no tool of that name is configured                            |
 * | `invalid_json`   | `error`     | `args` is a string that is not JSON                           |
 * | `incomplete_args`| `error`     | the arguments were cut off (max_tokens, a broken stream)      |
 * | `invalid_args`   | `error`     | the arguments fail the tool's schema (`issues` has the paths) |
 * | `tool_error`     | `error`     | the body threw, rejected, or its stream errored               |
 * | `timeout`        | `error`     | the body ran past its `timeoutMs`                             |
 * | `invalid_output` | `error`     | the body's value cannot be rendered as text (e.g. a BigInt)   |
 * | `cancelled`      | `cancelled` | cancel-rest, `ctx.cancelRest()`, or the run's signal aborted  |
 * | `restricted`     | `denied`    | the restriction set hides the tool in this scope              |
 * | `denied`         | `denied`    | the pre-execute policies decided `deny`                       |
 * | `policy_error`   | `denied` / `error` | a policy threw or returned a non-decision (fail closed) |
 * | `invalid_rewrite`| `error`     | a policy rewrote the arguments into ones the schema rejects   |
 * | `approval_*`     | `denied`    | an `ask` was not approved: `rejected`, `unavailable` (no approver), `error` (it threw), `invalid` (another answer), `timeout`, `aborted` (the stage stopped without a batch cancellation; a cancelled batch gives `cancelled` instead) |
 * | `blocked`        | `error`     | a post-execute policy withheld the output                     |
 * | `approval_pending` | `suspended` | the approver suspended the call: it waits for `resume` with an answer (durable turns) |
 * | `behind_suspended` | `suspended` | it waits behind a suspended call it may not overtake (a barrier) |
 * | `outcome_unknown` | `error`    | the process running it (a crashed agent, or a remote tool's worker) stopped before it finished; it may or may not have taken effect |
 *
 * @example
 * ```ts
 * function explain(error: ToolError): string {
 *   switch (error.code) {
 *     case 'invalid_args': return error.issues.map((i) => i.path.join('.')).join(', ');
 *     case 'timeout': return `gave up after ${error.timeoutMs} ms`;
 *     default: return error.message;
 *   }
 * }
 * ```
 */
export type ToolError =
  | InvalidCallError
  | DuplicateIdError
  | UnknownToolError
  | InvalidJsonError
  | IncompleteArgsError
  | InvalidArgsError
  | ToolBodyError
  | TimeoutError
  | InvalidOutputError
  | CancelledError
  | RestrictedError
  | DeniedError
  | PolicyError
  | InvalidRewriteError
  | ApprovalError
  | BlockedError
  | ApprovalPendingError
  | BehindSuspendedError
  | OutcomeUnknownError;

/** The `code` of every {@link ToolError}. */
export type ToolErrorCode = ToolError['code'];

/** The call is not a `{ id: string, name: string, args }` object. */
export interface InvalidCallError {
  readonly code: 'invalid_call';
  readonly message: string;
}

/** The id was already used by an earlier call of the same subscription. */
export interface DuplicateIdError {
  readonly code: 'duplicate_id';
  readonly message: string;
}

/** No configured tool has this name. */
export interface UnknownToolError {
  readonly code: 'unknown_tool';
  readonly message: string;
  /** The names the model may use instead. */
  readonly available: readonly string[];
}

/** `args` was a string and not valid JSON. */
export interface InvalidJsonError {
  readonly code: 'invalid_json';
  readonly message: string;
}

/** The arguments never arrived whole (see `IncompleteArguments`); the call did not run. */
export interface IncompleteArgsError {
  readonly code: 'incomplete_args';
  readonly message: string;
  /** Why, e.g. `'max_tokens'` or `'stream_error'`. */
  readonly reason: string;
}

/** One problem the tool's schema found, with the path into the arguments. */
export interface ArgsIssue {
  /** Path into the arguments, e.g. `['files', 2, 'path']`; empty for the arguments as a whole. */
  readonly path: readonly PropertyKey[];
  /** The schema library's issue code, e.g. `invalid_type`. */
  readonly code: string;
  readonly message: string;
}

/** The arguments failed the tool's input schema. */
export interface InvalidArgsError {
  readonly code: 'invalid_args';
  readonly message: string;
  readonly issues: readonly ArgsIssue[];
}

/** The tool body threw, rejected, or its output stream errored. */
export interface ToolBodyError {
  readonly code: 'tool_error';
  readonly message: string;
  /** What the body threw, as thrown. */
  readonly cause: unknown;
}

/** The tool body ran past its time limit; its signal was aborted with a `TimeoutError`. */
export interface TimeoutError {
  readonly code: 'timeout';
  readonly message: string;
  readonly timeoutMs: number;
}

/** The body succeeded but its value cannot be rendered as text for the model. */
export interface InvalidOutputError {
  readonly code: 'invalid_output';
  readonly message: string;
}

/** Why a call was cancelled. */
export type CancelReason =
  /** Another call of the subscription failed and `onError` is `'cancel-rest'`. */
  | 'sibling_failed'
  /** A tool body called `ctx.cancelRest()`. */
  | 'cancel_requested'
  /** The `signal` given to `run()` / `operator()` aborted. */
  | 'aborted'
  /** The call source (the model's response) errored, and the tool starts only after a complete one (`start: 'after-response'`). */
  | 'response_failed';

/** The call was cancelled before it finished; `started` says whether its body had begun. */
export interface CancelledError {
  readonly code: 'cancelled';
  readonly message: string;
  readonly reason: CancelReason;
  /** The call whose failure or `cancelRest()` caused this; absent for `'aborted'`. */
  readonly byCallId?: string;
  /**
   * For `'aborted'`: what the run's signal was aborted with (`controller.abort(reason)`; `switchTurns`
   * gives its `reason`) — an error's message, a string as it is, another value described, at most 200
   * characters; the message says it too. Absent when the signal was aborted without a reason.
   */
  readonly abortReason?: string;
  /** Whether the body had started (it then saw its signal abort). */
  readonly started: boolean;
}

/** The restriction set hides the tool from this scope. */
export interface RestrictedError {
  readonly code: 'restricted';
  readonly message: string;
  /** The layer that decided, and the pattern that matched. */
  readonly scope: string | undefined;
  readonly pattern: string | undefined;
}

/** The pre-execute policies decided `deny`. */
export interface DeniedError {
  readonly code: 'denied';
  readonly message: string;
  /** The policy whose decision made it `deny` (`'(default)'` for `defaultDecision`). */
  readonly policy: string;
  readonly reasons: readonly string[];
  /**
   * When: `'pre'` — the pre-execute chain denied it; `'start'` — a check the policy registered with
   * `ctx.beforeStart` denied it immediately before its body would have started.
   */
  readonly stage: 'pre' | 'start';
}

/** A policy threw or returned something that is not a decision: the call fails closed. */
export interface PolicyError {
  readonly code: 'policy_error';
  readonly message: string;
  /**
   * The chain that failed: pre-execute, a check before the body's start, execute middleware (see
   * `ExecuteMiddleware`), post-execute, or result middleware.
   */
  readonly stage: 'pre' | 'start' | 'execute' | 'post' | 'result';
  readonly policy: string;
  readonly cause: unknown;
}

/** A policy rewrote the arguments into ones the tool's schema rejects. */
export interface InvalidRewriteError {
  readonly code: 'invalid_rewrite';
  readonly message: string;
  readonly policy: string;
  readonly issues: readonly ArgsIssue[];
}

/** An `ask` that was not approved; the code says why. */
export interface ApprovalError {
  readonly code:
    | 'approval_rejected'
    | 'approval_unavailable'
    | 'approval_error'
    | 'approval_invalid'
    | 'approval_timeout'
    | 'approval_aborted';
  readonly message: string;
  /** The reasons the policies gave for asking. */
  readonly reasons: readonly string[];
}

/** A post-execute policy withheld the output; `message` is its feedback. */
export interface BlockedError {
  readonly code: 'blocked';
  readonly message: string;
  readonly policy: string;
}

/** The approver suspended the call: it waits for an answer given to `resume` (durable turns). */
export interface ApprovalPendingError {
  readonly code: 'approval_pending';
  readonly message: string;
  /** What to ask a human, and the token that answers it. */
  readonly approval: PendingApproval;
}

/**
 * The call may not start before a suspended call has finished (an exclusive call behind any unfinished
 * call, any call behind an exclusive one), so it is suspended too; `resume` runs it.
 */
export interface BehindSuspendedError {
  readonly code: 'behind_suspended';
  readonly message: string;
  /** The suspended call it waits behind. */
  readonly byCallId: string;
}

/**
 * The process running the call's body stopped before it finished — a resumed turn found the call
 * started and never finished, or the worker running a remote tool's job died mid-body. Its tool is not
 * `idempotent`, so it is not run again; it may or may not have taken effect.
 */
export interface OutcomeUnknownError {
  readonly code: 'outcome_unknown';
  readonly message: string;
}
