// Typed outcomes: what a body or an execute middleware may end an attempt with besides a value or an
// error. (A leaf: shapes only; the constructors are `outcome` in util/outcome.ts.)
import type { ApprovalPendingError } from './toolError.js';

/**
 * The attempt's effect may or may not have happened, and running it again could repeat it: the call
 * fails `outcome_unknown` (`error`, with `message` after the tool's name), as a failure of its mode —
 * an exclusive call cancels the rest of its turn unless its `onError` says otherwise — and is never
 * retried, whatever the tool's `retry` says. A remote tool ends so when the worker running its job died
 * mid-body. Made by `outcome.unknown`.
 *
 * @example
 * ```ts
 * const lost: UnknownOutcome = outcome.unknown('its worker died mid-body');
 * ```
 */
export interface UnknownOutcome {
  readonly kind: 'outcome-unknown';
  /** Why, for the model and the host: the result's message is `Tool "<name>": <message>`. */
  readonly message: string;
}

/**
 * The call waits for a human's answer (`error` is the pending approval, with its token): it ends
 * `suspended` with that error, not failed — it cancels nothing, is never retried, and holds its place,
 * so calls that may not overtake it are suspended too (`behind_suspended`) and a resume runs them. Only
 * a durable turn can resume it: a program in one (`run_code`) ends so when it can only wait for approvals
 * its sub-calls suspended. Made by `outcome.suspended`.
 *
 * @example
 * ```ts
 * const waiting: SuspendedOutcome = outcome.suspended({ code: 'approval_pending', message, approval });
 * ```
 */
export interface SuspendedOutcome {
  readonly kind: 'suspended';
  readonly error: ApprovalPendingError;
}

/**
 * A streamed output: the call's result is `streamed: true` with these items (kept to the tool's
 * `retention.maxItems`; on an abort the iterable's `return()` is called), as if the body had returned
 * the stream itself. Two uses:
 * - a body that learns only after an `await` whether its output is a value or a stream (a remote tool:
 *   the worker's body decides) returns `outcome.streamed(items)` from its promise;
 * - what `next()` resolves to in an execute middleware when the body streamed: its items, collected (an
 *   array). Return it as it is to keep the result streamed; to change the items, return
 *   `outcome.streamed(newItems)` (or a stream of them). Any other value is a plain value.
 *
 * @typeParam Items - the items: an array (as `next()` gives them, collected) or an async iterable.
 *
 * @example
 * ```ts
 * // In the chain of a tool whose body streams lines: keep the first ten, still streamed.
 * const firstTen: ExecuteMiddleware = async (ctx, next) => {
 *   const output = (await next()) as Streamed;
 *   return outcome.streamed(output.items.slice(0, 10));
 * };
 * ```
 */
export interface Streamed<Items extends AsyncIterable<unknown> | readonly unknown[] = readonly unknown[]> {
  readonly kind: 'streamed';
  readonly items: Items;
}

/**
 * What only the engine can do with a call, as a value a body or an execute middleware ends its attempt
 * with (made by `outcome`, and recognised only when made by it: a plain object of the same shape is
 * just a value). Returned or thrown, the same: an attempt whose output — what the body or middleware
 * returned, or its promise resolved with — or whose failure — what it threw, its promise rejected
 * with, or its stream failed with — is an outcome ends with that outcome. Return it where you can;
 * throw it where a return cannot reach (deep in a helper, or a stream that must stop midway).
 * In an execute chain, `next()` rejects with an `UnknownOutcome` or a `SuspendedOutcome` the body
 * ended with (returned or thrown), and resolves to a `Streamed` for a streamed output.
 *
 * @example
 * ```ts
 * // A wrapper that counts the calls whose effect is unknown, and lets every outcome through.
 * const countUnknown: ExecuteMiddleware = async (ctx, next) => {
 *   try {
 *     return await next();
 *   } catch (error) {
 *     const ended: ExecuteOutcome | undefined = outcome.of(error);
 *     if (ended?.kind === 'outcome-unknown') unknownCalls.add(1, { tool: ctx.tool.name });
 *     throw error; // re-thrown unchanged: still the body's
 *   }
 * };
 * ```
 */
export type ExecuteOutcome = UnknownOutcome | SuspendedOutcome | Streamed<AsyncIterable<unknown> | readonly unknown[]>;

/**
 * The constructors of typed outcomes (the type of `outcome`), and their recogniser.
 *
 * @example
 * ```ts
 * // A remote body: a value, or a stream it learns of only once the job answered.
 * const dispatch = async (args: unknown, ctx: ToolContext) => {
 *   const job = await queue.run(args, ctx.signal);
 *   if (job.lost) return outcome.unknown('its worker died mid-body');
 *   return job.streams ? outcome.streamed(job.items()) : job.value;
 * };
 * ```
 */
export interface Outcomes {
  /** The attempt's effect may or may not have happened: `error`, `outcome_unknown`, never retried. */
  unknown(message: string): UnknownOutcome;
  /** The call waits for a human's answer: `suspended` with `error`, cancelling nothing. */
  suspended(error: ApprovalPendingError): SuspendedOutcome;
  /** The output is these items, streamed (an array, or an async iterable read to its end). */
  streamed<Items extends AsyncIterable<unknown> | readonly unknown[]>(items: Items): Streamed<Items>;
  /** `value` if it is an outcome made by `outcome` (by any copy of toolstream in the process), else `undefined`. */
  of(value: unknown): ExecuteOutcome | undefined;
}
