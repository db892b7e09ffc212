// Tools: their definition, the context a body sees, and the frozen tool a pipeline holds. (A leaf: imports only from types/.)
import type { Observable } from 'rxjs';
import type { $ZodType, output as SchemaOutput } from 'zod/v4/core';
import type { ExecuteMiddleware } from './execute.js';
import type { JsonValue } from './json.js';
import type { ResultMiddleware } from './resultChain.js';
import type { ResolvedRetry, RetryOptions } from './retry.js';
import type { Limiter, LimitOptions, RateLimiter, RateLimitOptions, ResolvedLimit, ResolvedRateLimit, ScheduleFacts, ToolStart } from './schedule.js';

/**
 * How a tool may overlap with others.
 * - `'parallel'`: safe to run alongside other parallel calls (reads, lookups).
 * - `'exclusive'`: a barrier; it starts after every earlier call finished and nothing starts until it
 *   finished (writes, shell commands). The default, because only tools known to be safe should overlap.
 */
export type ToolMode = 'parallel' | 'exclusive';

/**
 * What a failed call does to its siblings.
 * - `'cancel-rest'`: every unfinished call of its turn (`ToolCall.turn`; the subscription's, for calls
 *   without one) is cancelled (running bodies see their signal abort); each still gets a `cancelled`
 *   result. Other turns go on.
 * - `'continue'`: the others go on.
 * Unset on the tool and the pipeline, the tool's mode decides: exclusive → `'cancel-rest'`, parallel →
 * `'continue'`.
 */
export type OnError = 'cancel-rest' | 'continue';

/**
 * What a tool body sees besides its arguments.
 *
 * @example
 * ```ts
 * const fetchPage = defineTool({
 *   name: 'fetch_page',
 *   description: 'Fetch a URL',
 *   input: z.object({ url: z.url() }),
 *   mode: 'parallel',
 *   execute: async ({ url }, ctx) => (await fetch(url, { signal: ctx.signal })).text(),
 * });
 * ```
 */
export interface ToolContext {
  /** Aborts on timeout, cancel-rest, the run's signal, or unsubscribe. Pass it to everything you await. */
  readonly signal: AbortSignal;
  /** The call's id, as the model sent it. */
  readonly callId: string;
  /** The call's arrival index within the subscription. */
  readonly index: number;
  /**
   * The call's turn: the model response it came in (`ToolCall.turn`), or the durable run's `turn`;
   * `undefined` for a call of the subscription's anonymous turn. With `callId` it names the call
   * across processes (a remote tool derives its job's id from both).
   */
  readonly turn: string | undefined;
  /**
   * A key for APIs that deduplicate requests (an `Idempotency-Key` header, a job id, an upsert key): the
   * same string for every attempt of this call (`retry`), derived from what names the call — in a
   * durable turn from the durable call (the same after a resume, in any process), otherwise from `turn`
   * and `callId` (the same whenever a call with both is run again), and for a call without a turn from
   * its subscription and `callId` (stable across retries within that subscription only). A remote
   * tool's worker (`toolstream/bullmq`) sees the same key as the agent. `tsk-` and base64url.
   *
   * @example
   * ```ts
   * execute: async ({ order }, ctx) =>
   *   stripe.refunds.create({ payment_intent: order }, { idempotencyKey: ctx.idempotencyKey }),
   * ```
   */
  readonly idempotencyKey: string;
  /**
   * Cancel every other unfinished call of this subscription on purpose (they get `cancelled` results
   * with reason `'cancel_requested'`). This call itself goes on.
   */
  cancelRest(): void;
  /**
   * Report progress while the body runs: a JSON value (a fraction, a `{ done, total }`, a line of
   * output), delivered as a `progress` event to `pipeline.events()` subscribers and event observers —
   * a UI shows it live. Cheap and safe to call anywhere: it does nothing when nobody watches the run's
   * events, or once the call's result is decided. Bounded by the pipeline's `progress` budget (a value
   * too long is cut, reports past the count are dropped). The value is copied as JSON when reported; one
   * JSON cannot hold is reported as a note instead. In a remote tool's body (`toolstream/bullmq`) each
   * report travels back to the agent's call, in order, before its result.
   *
   * @example
   * ```ts
   * execute: async ({ files }, ctx) => {
   *   for (const [i, file] of files.entries()) {
   *     ctx.progress({ done: i, total: files.length, file });
   *     await build(file, ctx.signal);
   *   }
   * }
   * ```
   */
  progress(value: JsonValue): void;
}

/**
 * What a body may return: a value, a promise of one, or a stream of items (an Observable or an
 * AsyncIterable) that is collected into an array. A body may also end with a typed outcome (made by
 * `outcome`; see `ExecuteOutcome`), returned or thrown: a returned one is part of `T` to the types
 * (a body typed `unknown` can return one anywhere).
 */
export type ToolOutput<T> = T | PromiseLike<T> | Observable<T> | AsyncIterable<T>;

/**
 * The definition of a tool, as given to {@link defineTool}. The optional fields also take `undefined`,
 * and `retry`, `limit` and `rateLimit` their resolved forms, as a {@link Tool} holds them: another tool
 * spread into a definition (`defineTool({ ...tool, timeoutMs: 5_000 })`) holds under
 * `exactOptionalPropertyTypes`, and keeps that tool's limiters (the two share their limits).
 *
 * @typeParam Input - the zod schema of the arguments (zod 4 classic or mini).
 */
export interface ToolDefinition<Input extends $ZodType = $ZodType, Output = unknown> {
  /** The name the model calls it by: 1–128 characters of letters, digits, `_`, `-`, `.` or `:`. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The zod schema of the arguments. The body receives its parsed output. */
  readonly input: Input;
  /** @default 'exclusive' */
  readonly mode?: ToolMode | undefined;
  /**
   * Abort the body and fail the call (`timeout`) after this many milliseconds; `Infinity` for no limit
   * (for tools that legitimately run for hours and honour their signal).
   * @default the pipeline's `defaultTimeoutMs` (5 minutes unless set)
   */
  readonly timeoutMs?: number | undefined;
  /**
   * What a failure of this tool does to the other unfinished calls of its turn; overrides the
   * pipeline's `onError`. @default the pipeline's `onError`, else by `mode`: `'continue'` for a parallel
   * tool, `'cancel-rest'` for an exclusive one
   */
  readonly onError?: OnError | undefined;
  /**
   * Safe to run again for the same call: a durable turn resumed after a crash re-runs a call of this
   * tool that had started and not finished (otherwise it is answered `outcome_unknown` and never runs
   * again). Declare it only for bodies whose repetition is harmless (reads, upserts keyed by
   * `ctx.callId`).
   * @default false
   */
  readonly idempotent?: boolean | undefined;
  /**
   * Run a failed body again (a throw, a rejection, a stream error, or a timeout), up to
   * `retry.attempts` bodies in all, after a growing delay. Allowed only for an `idempotent: true` tool,
   * or with an explicit `retry.retryOn`. Each attempt has its own `timeoutMs`; the call keeps its pool
   * slot through the delays; cancelling stops retrying. The result counts them (`result.attempts`) and
   * its trace holds each failed attempt's error. See {@link RetryOptions}.
   * @default no retry
   */
  readonly retry?: RetryOptions | ResolvedRetry | undefined;
  /**
   * At most this many bodies of the tool at once (or per `key(args)` value), across every turn of every
   * pipeline that runs it; a shared {@link Limiter} caps several tools together. A call waiting for
   * its limit holds no pool slot and does not hold up the parallel calls behind it (an exclusive call
   * still waits for every earlier call, limited or not, and nothing passes it). The wait is queue time,
   * never the body's timeout. See `createLimiter`.
   * @default no limit beyond the pipeline's `concurrency`
   */
  readonly limit?: Limiter | LimitOptions<SchemaOutput<Input>> | ResolvedLimit<SchemaOutput<Input>> | undefined;
  /**
   * At most `max` bodies of the tool start in any window of `perMs` milliseconds (or per `key(args)`
   * value), across every turn of every pipeline that runs it; a shared {@link RateLimiter} is one quota
   * for several tools. A call waiting for a token holds no pool slot and does not hold up the parallel
   * calls behind it (an exclusive call waits at the head, and nothing passes it). The wait is queue
   * time, never the body's timeout. With a `limit` too, a call first takes its permit, then its token,
   * and the token is spent only when its body starts. See `createRateLimiter`.
   * @default no rate limit
   */
  readonly rateLimit?: RateLimiter | RateLimitOptions<SchemaOutput<Input>> | ResolvedRateLimit<SchemaOutput<Input>> | undefined;
  /**
   * When its calls may start. `'eager'`: as soon as the pool admits them, while the model may still be
   * streaming the rest of its response — right for reads, which lose nothing if the response breaks
   * off. `'after-response'`: only once the call source completed cleanly (the model's response
   * ended); if the source errors (a dropped stream, an aborted generation) the call is answered
   * `cancelled` (`response_failed`) and never runs — right for writes and other effects that should
   * not start on a half-streamed response. A waiting call holds no pool slot and does not hold up the
   * parallel calls behind it; an exclusive call behind it still waits for it, and an exclusive
   * `after-response` call waits at the head, so calls keep their order.
   * @default 'eager'
   */
  readonly start?: ToolStart | undefined;
  /**
   * Middleware of this tool's own: `execute` around each attempt of its body, inside the pipeline's
   * `execute` (a cache of one tool); `result` over each of its results, inside the pipeline's `result`.
   * See {@link ExecuteMiddleware} and {@link ResultMiddleware}.
   * @default none
   */
  readonly chains?: ToolChains<SchemaOutput<Input>> | undefined;
  /** The body. It should honour `ctx.signal`. */
  readonly execute: (args: SchemaOutput<Input>, ctx: ToolContext) => ToolOutput<Output>;
  /**
   * The model-facing text of a value the body returned, when it should differ from the value itself
   * (the value stays on the result for the host: `result.value`). A throw makes the call an
   * `invalid_output` error. Not used for streamed output.
   * @default strings as they are, anything else as JSON
   */
  readonly render?: Render<Output> | undefined;
}

/**
 * A tool's (or a contract's) `render`. Method syntax makes the parameter bivariant, so a tool of any
 * output (even `never`) is an `AnyTool`, and contracts of different outputs share a list.
 *
 * @example
 * ```ts
 * const render: Render<{ temperature: number }> = (value) => `${value.temperature} °C`;
 * ```
 */
export type Render<Output> = {
  /** The model-facing text of `value`. */
  render(value: Output): string;
}['render'];

/**
 * A tool's own middleware (`defineTool({ chains })`), run inside the pipeline's.
 *
 * @typeParam Args - the tool's admitted arguments (its schema's output), as its execute middleware sees them.
 *
 * @example
 * ```ts
 * const weather = defineTool({
 *   ...definition,
 *   chains: { execute: [(ctx, next) => forecasts.get(ctx.args.city) ?? next()] },
 * });
 * ```
 */
export interface ToolChains<Args = unknown> {
  readonly execute?: readonly ExecuteMiddleware<Args>[];
  readonly result?: readonly ResultMiddleware[];
}

/** A validated, frozen tool, ready for a pipeline. Build one with {@link defineTool}. */
export interface Tool<Input extends $ZodType = $ZodType, Output = unknown>
  extends Required<Omit<ToolDefinition<Input, Output>, 'mode' | 'idempotent' | 'timeoutMs' | 'onError' | 'render' | 'retry' | 'chains' | keyof ScheduleFacts>>,
    ScheduleFacts<SchemaOutput<Input>> {
  readonly mode: ToolMode;
  readonly idempotent: boolean;
  /** The tool's own middleware (frozen copies of the lists it was given); undefined for none. */
  readonly chains: ToolChains<SchemaOutput<Input>> | undefined;
  readonly timeoutMs: number | undefined;
  /** The tool's `retry`, defaults filled in; undefined for none. */
  readonly retry: ResolvedRetry | undefined;
  readonly onError: OnError | undefined;
  /** The tool's `render`; undefined: strings as they are, anything else as JSON. */
  readonly render: Render<Output> | undefined;
}

/** A tool of any schema and output, as a pipeline holds them. */
// The body's parameter is contravariant, so a list of differently typed tools needs `any` here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any, any>;

/** What a tool is, without its body: everything {@link defineTool} checks but `execute`, `render` and `chains`. */
export type ToolFacts<Input extends $ZodType = $ZodType> = Omit<Tool<Input>, 'execute' | 'render' | 'chains' | keyof ScheduleFacts>;
