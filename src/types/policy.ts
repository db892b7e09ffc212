// Pre- and post-execute policies, start checks and approvers: what they see and answer. (A leaf: imports only from types/.)
import type { AnswerInput, NextAnswer } from './answer.js';
import type { Decision } from './decision.js';
import type { AnyTool } from './tool.js';
import type { ToolCall } from './toolCall.js';
import type { ToolError } from './toolError.js';
import type { ResultStatus } from './toolResult.js';

/**
 * What a pre-execute policy returns to decide.
 *
 * @example
 * ```ts
 * const decision: PreDecision = { decision: 'ask', reason: 'writes outside the workspace' };
 * ```
 */
export interface PreDecision {
  readonly decision: Decision;
  /** Why: shown to the approver, and to the model when the call is denied. */
  readonly reason?: string;
}

/**
 * What a pre-execute policy sees.
 *
 * @example
 * ```ts
 * const logCalls: PrePolicy = (ctx, next) => {
 *   console.log(ctx.call.name, ctx.args);
 *   return next();
 * };
 * ```
 */
export interface PreContext {
  /** The call as the model sent it. */
  readonly call: ToolCall;
  /** The tool it resolved to. */
  readonly tool: AnyTool;
  /**
   * The current arguments as the body will receive them: the schema's output (defaults, transforms).
   * A read-only view: deep-frozen, so writing to it throws (in strict code) and changes nothing; the
   * only way to change the arguments is {@link PreContext.rewriteArgs}.
   */
  readonly args: unknown;
  /**
   * The current arguments in the schema's input form: as the model sent them (JSON parsed), with the
   * rewrites of earlier policies. Rewrite from this, not from `args`: with transforms the forms differ.
   * Deep-frozen like `args`: build the new arguments as a copy (`{ ...ctx.input, path }`).
   */
  readonly input: unknown;
  /** The call's arrival index within the subscription. */
  readonly index: number;
  /** Aborts when the run is aborted or unsubscribed. */
  readonly signal: AbortSignal;
  /**
   * Replace the arguments (in the schema's input form, like `input`) for the policies after this one
   * and for the body. Only before this policy calls `next()` (and while the chain runs): afterwards
   * the policies after it have decided on what they saw, so a late rewrite throws and, uncaught, fails
   * the call closed. They are validated by the tool's schema at once; a failure throws, and if the policy lets it propagate the call ends with an
   * `invalid_rewrite` error result and never runs. They are copied (as JSON data) and frozen when given:
   * changing the object passed in afterwards changes nothing.
   */
  rewriteArgs(args: unknown): void;
  /**
   * Registers a check to repeat immediately before the body starts, on the arguments it will start
   * with. Approvals, barriers and a full pool can keep a call waiting for minutes after this policy
   * decided; what it checked (a file, a quota) may have changed meanwhile. The check runs once the call
   * has its slot, after every approval, and only if the call is still to run; it may deny, never allow
   * more. Registering is allowed until the chain ends (after `next()` too: it only tightens).
   */
  beforeStart(check: StartCheck): void;
}

/**
 * A check a pre-execute policy registered with `ctx.beforeStart`, run immediately before the body
 * starts: answer `undefined` (or `{ decision: 'allow' }`) to let it start, `{ decision: 'deny', reason }`
 * to deny it (a `denied` result with `stage: 'start'`). A throw, a rejection, any other answer, or no
 * answer within `policyTimeoutMs` denies it too (`policy_error`, fail closed). The call holds its pool
 * slot while its checks run; its `timeoutMs` starts with the body.
 *
 * It answers at once, with a promise, or with an Observable (see {@link AnswerInput}). An Observable is
 * **one answer**: its first value counts and it is unsubscribed then; one that completes without a
 * value fails closed; one still pending at `policyTimeoutMs` (or when the call is cancelled) is
 * unsubscribed. A check that answers at once keeps the start synchronous; the timeout runs on the
 * pipeline's `scheduler`.
 *
 * @example
 * ```ts
 * const stillThere: PrePolicy = function stillThere(ctx) {
 *   ctx.beforeStart(async (args) => ((await exists((args as { path: string }).path)) ? undefined : { decision: 'deny', reason: 'the file is gone' }));
 *   return undefined;
 * };
 * ```
 */
export type StartCheck = (args: unknown, signal: AbortSignal) => AnswerInput<StartVerdict | undefined>;

/** What a {@link StartCheck} answers: go on, or deny (with why, for the model). */
export type StartVerdict = { readonly decision: 'allow' } | { readonly decision: 'deny'; readonly reason?: string };

/**
 * A pre-execute policy: decide (`return { decision }`), delegate (`return next()`, then inspect what
 * came back), or pass (`return undefined`, the same as delegating). `next()` runs the rest of the chain
 * once and gives its decision as the guard has folded it, as a {@link NextAnswer}: await it, or pipe
 * RxJS operators into it (`next().pipe(map(...))`); calling it twice fails. A policy that throws or
 * answers anything but a decision denies the call (fail closed). Name your functions: the name appears
 * in traces and error messages.
 *
 * It answers at once, with a promise, or with an Observable (see {@link AnswerInput}). An Observable is
 * **one answer**: its first value counts and it is unsubscribed then; one that errors or completes
 * without a value denies the call (`policy_error`, "completed without answering"); one still pending
 * when the chain has not decided within `policyTimeoutMs` is unsubscribed at that deadline (and the
 * call denied). The deadline runs on the pipeline's `scheduler`, so a policy answering with
 * `timer(30)` is decided at frame 30 inside `TestScheduler.run()`. While every policy answers at once,
 * the chain decides synchronously.
 *
 * @example
 * ```ts
 * const noShellOnFridays: PrePolicy = function noShellOnFridays(ctx) {
 *   if (ctx.call.name === 'shell' && new Date().getDay() === 5) return { decision: 'deny', reason: 'read-only Friday' };
 *   return undefined;
 * };
 * // Tightens what the rest decided, synchronously when the rest answered at once.
 * const askForWrites: PrePolicy = (ctx, next) =>
 *   next().pipe(map((d) => (ctx.call.name === 'write' && d.decision === 'allow' ? { decision: 'ask' } : d)));
 * ```
 */
export type PrePolicy = (ctx: PreContext, next: () => NextAnswer<PreDecision>) => AnswerInput<PreDecision | undefined>;

/** What a post-execute policy returns. */
export type PostDecision =
  /**
   * Let the output through. `content` replaces the model-facing text (for any status, e.g. to add
   * context to an error); `value` replaces the value of an `ok` result; `meta` is merged into the
   * result's `meta`.
   */
  | { readonly kind: 'accept'; readonly content?: string; readonly value?: unknown; readonly meta?: Readonly<Record<string, unknown>> }
  /** Withhold the output: an `ok` result becomes an error result whose content is `feedback`. */
  | { readonly kind: 'block'; readonly feedback: string };

/**
 * What a post-execute policy sees: the outcome so far (after the policies nearer the end of the chain,
 * once `next()` has resolved).
 *
 * @example
 * ```ts
 * const redact: PostPolicy = (ctx) =>
 *   ctx.status === 'ok' ? { kind: 'accept', content: ctx.content.replaceAll(/sk-\w+/g, '[redacted]') } : undefined;
 * ```
 */
export interface PostContext {
  readonly call: ToolCall;
  /** Undefined when intake never resolved the tool (e.g. `unknown_tool`). */
  readonly tool: AnyTool | undefined;
  /** The effective arguments (deep-frozen when intake read them). */
  readonly args: unknown;
  readonly index: number;
  readonly status: ResultStatus;
  /** The value of an `ok` result. */
  readonly value: unknown;
  /** The model-facing text. */
  readonly content: string;
  /** The error of a non-`ok` result. */
  readonly error: ToolError | undefined;
  readonly signal: AbortSignal;
}

/**
 * A post-execute policy, in the same waterfall shape as {@link PrePolicy}: decide, or delegate with
 * `next()` (a {@link NextAnswer} of the outcome of the rest of the chain: await it or pipe it). A block
 * cannot be undone by a policy further out; a throwing policy blocks (fail closed). Denied and failed
 * results pass through too, but no policy turns them into success.
 *
 * It answers at once, with a promise, or with an Observable: **one answer**, as for a pre-execute
 * policy — the first value counts, an Observable that errors or completes empty withholds an `ok`
 * result's output (`policy_error`, fail closed), and one still pending at `policyTimeoutMs` is
 * unsubscribed at that deadline.
 *
 * @example
 * ```ts
 * const noSecrets: PostPolicy = function noSecrets(ctx) {
 *   if (/BEGIN PRIVATE KEY/.test(ctx.content)) return { kind: 'block', feedback: 'The output held a private key and was withheld.' };
 *   return undefined;
 * };
 * ```
 */
export type PostPolicy = (ctx: PostContext, next: () => NextAnswer<PostDecision>) => AnswerInput<PostDecision | undefined>;

/**
 * An approver's answer: `'allowed-once'` admits the call, `'rejected'` denies it, and `'suspend'` (in a
 * durable turn: a pipeline with a `journal`, a run with a `turn`) leaves it waiting for an answer given
 * later to `resume` — from another request, another process. Anything else denies.
 */
export type ApprovalAnswer = 'allowed-once' | 'rejected' | 'suspend';

/**
 * What an approver is asked.
 *
 * @example
 * ```ts
 * const approve: Approver = async (request) =>
 *   (await askHuman(`${request.tool.name}(${JSON.stringify(request.args)})? ${request.reasons.join('; ')}`))
 *     ? 'allowed-once'
 *     : 'rejected';
 * ```
 */
export interface ApprovalRequest {
  readonly call: ToolCall;
  readonly tool: AnyTool;
  /**
   * The effective arguments: exactly what the body will receive if approved. Deep-frozen: to shorten
   * them for a prompt, make a copy — what the human approves is what runs.
   */
  readonly args: unknown;
  readonly index: number;
  /** The reasons the policies gave for asking. */
  readonly reasons: readonly string[];
}

/**
 * Decides one `ask`ed call. An approval admits that one call only: the next call to the same tool asks
 * again. Throwing, answering anything but `'allowed-once'`, the signal aborting, or `approvalTimeoutMs`
 * passing all deny.
 *
 * It answers at once (`() => 'allowed-once'`: the call goes on synchronously), with a promise, or with
 * an Observable (see {@link AnswerInput}). An Observable is **one answer**: its first value counts and
 * it is unsubscribed then; one that errors denies (`approval_error`), one that completes without a
 * value denies (`approval_invalid`, "completed without an answer"), and one still pending at
 * `approvalTimeoutMs` (`approval_timeout`) or when the run is aborted is unsubscribed then. The
 * timeout runs on the pipeline's `scheduler`: an approver answering `timer(30).pipe(map(() =>
 * 'allowed-once'))` is answered at frame 30 inside `TestScheduler.run()`. Its `signal` aborts too
 * whenever the call is not approved, so a question in flight can be withdrawn.
 *
 * A promise is typed as `PromiseLike<string>`: TypeScript widens the literal an `async` function
 * returns to `string` when the declared return type is a union, so `async () => 'allowed-once'` would
 * not compile otherwise. Any string but the three answers denies (`approval_invalid`).
 *
 * @example
 * ```ts
 * const approve: Approver = async (request) =>
 *   (await askHuman(`${request.tool.name}(${JSON.stringify(request.args)})?`)) ? 'allowed-once' : 'rejected';
 * // Or as a stream: the first answer a UI pushes counts.
 * const fromUi: Approver = (request) => answers$.pipe(filter((a) => a.id === request.call.id), map((a) => a.answer));
 * ```
 */
export type Approver = (request: ApprovalRequest, signal: AbortSignal) => AnswerInput<ApprovalAnswer> | PromiseLike<string>;
