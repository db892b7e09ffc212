// The execute chain: middleware around each attempt of a tool body. (A leaf: imports only from types/.)
import type { NextAnswer } from './answer.js';
import type { Streamed } from './outcome.js';
import type { ToolCall } from './toolCall.js';

/**
 * What an execute middleware sees of the tool: the tool itself (the frozen object the pipeline holds),
 * typed as the facts a middleware decides by. Narrow on purpose: a tool's definition names its
 * middleware (`chains`), so this type cannot name the tool's type back.
 *
 * @example
 * ```ts
 * const cacheable = (tool: ExecuteTool) => tool.idempotent && tool.mode === 'parallel';
 * ```
 */
export interface ExecuteTool {
  readonly name: string;
  readonly description: string;
  readonly mode: 'parallel' | 'exclusive';
  /** Safe to run again for the same call (a read, an upsert): the only kind a cache should answer for. */
  readonly idempotent: boolean;
  /** The tool's own time limit of an attempt; `undefined`: the pipeline's `defaultTimeoutMs`. */
  readonly timeoutMs: number | undefined;
}

/**
 * What an execute middleware sees: one attempt of one call's body, made fresh for each attempt (a
 * retried call runs the chain once per attempt). The chain runs inside the call's pool slot, after the
 * guard and after the start checks (`ctx.beforeStart`), so it never sees a call they refused, and
 * within the attempt's time limit: the call's `timeoutMs` covers the chain and the body together.
 *
 * @typeParam Args - the admitted arguments' type: the tool's schema output in a tool's own chain.
 *
 * @example
 * ```ts
 * const logAttempts: ExecuteMiddleware = (ctx, next) => {
 *   console.log(`${ctx.call.name} ${ctx.call.id}: attempt ${ctx.attempt}`);
 *   return next();
 * };
 * ```
 */
export interface ExecuteContext<Args = unknown> {
  /** The tool the call resolved to. */
  readonly tool: ExecuteTool;
  /** The call as the model sent it (its arguments as sent), frozen. */
  readonly call: ToolCall;
  /** The admitted arguments, exactly what the body receives: the schema's output, deep-frozen. */
  readonly args: Args;
  /** The call's arrival index within the subscription. */
  readonly index: number;
  /** The call's turn (`ToolCall.turn`, or the durable run's); `undefined` for the anonymous turn. */
  readonly turn: string | undefined;
  /** Which attempt of the body this is: 1 for the first, 2 for the first retry, … */
  readonly attempt: number;
  /**
   * Aborts when the attempt is stopped: its time limit, cancel-rest, the run's signal, unsubscribe —
   * and, for the middleware after one that tightened it, when that middleware's signal aborts.
   */
  readonly signal: AbortSignal;
  /**
   * When the attempt's time limit ends, on the pipeline scheduler's clock (`scheduler.now()`, the wall
   * clock unless a test passes a virtual one); `undefined` when it has none.
   */
  readonly deadline: number | undefined;
  /** The call's idempotency key, the same for every attempt (see `ToolContext.idempotencyKey`). */
  readonly idempotencyKey: string;
}

/**
 * What `next()` may tighten for the rest of the chain and the body. Tightening only: a signal is added
 * to the attempt's (the body's `ctx.signal` aborts when either does), and a time limit shorter than
 * what is left of the attempt's ends the attempt as a `timeout` when it passes (a longer one is ignored).
 *
 * @example
 * ```ts
 * const twoSeconds: ExecuteMiddleware = (ctx, next) => next({ timeoutMs: 2_000 });
 * ```
 */
export interface Tightening {
  readonly signal?: AbortSignal;
  /** Milliseconds from now, on the pipeline's scheduler. */
  readonly timeoutMs?: number;
}

/**
 * Runs the rest of the chain and the body, **once**, at the call, and gives a {@link NextAnswer}: the
 * output of what it ran, shared, in two forms.
 *
 * - **Awaited** (a promise): the body's output once it settled — a value, or a streamed body's items
 *   collected ({@link Streamed}) — or a rejection with the body's own error (or the
 *   `outcome.unknown`/`outcome.suspended` it ended with, returned or thrown: see `ExecuteOutcome`).
 * - **Subscribed** (an Observable): the body's streamed **items, as they come**, as a body's are — the
 *   items it keeps (`retention`'s `maxItems`); a subscriber that comes late is given those kept so far,
 *   then the live ones; then it completes when the body did, or errors with the body's error. A value
 *   output is emitted once. RxJS operators work on it: `next().pipe(map(...))` is a stream of the
 *   mapped items, emitted at the frames of the body's (virtual time included).
 *
 * Either way nothing runs again: awaiting it and subscribing, or subscribing twice, share the one run,
 * and unsubscribing does not stop it (tighten the signal or the time limit with `next({ signal,
 * timeoutMs })` for that). A `retry` of it after it failed gets the same error by identity, runs
 * nothing, and is traced (`{ stage: 'execute', event: 'retry_refused' }`): retries are the tool's
 * `retry`, which the body's error (re-thrown unchanged) still gets. It is not `instanceof Promise`.
 *
 * It may be called once per middleware: a second call, or a call after the middleware's own output
 * settled, gives an answer that fails, and that middleware has failed (fail closed).
 *
 * @example
 * ```ts
 * import { map } from 'rxjs';
 *
 * const timed: ExecuteMiddleware = async (ctx, next) => {
 *   const started = performance.now();
 *   try {
 *     return await next();
 *   } finally {
 *     histogram.record(performance.now() - started, { tool: ctx.tool.name });
 *   }
 * };
 * // Each streamed row redacted as it comes; the output is streamed.
 * const redacted: ExecuteMiddleware = (ctx, next) => next().pipe(map((row) => redact(row)));
 * ```
 */
export type ExecuteNext = (tighten?: Tightening) => NextAnswer<unknown>;

/**
 * Execute middleware: a waterfall around each attempt of a call's body (koa-compose's shape, or
 * Angular's `HttpInterceptor`: `(ctx, next) => Observable`). It returns what a body would return — a
 * value, a promise, an Observable (or an interop observable), an AsyncIterable (streams are collected,
 * also when a promise resolves to one: an async middleware may return one) — and that is the
 * attempt's output: `return next()` runs the body, and a middleware that answers without calling
 * `next()` answers without the body (a cache).
 *
 * An Observable in execute is **the body's streamed items**, as a body's is (not one answer, as in the
 * `pre`, `post` and `result` chains): a middleware returning one has a streamed output, its items
 * collected. Two forms of `return next()` differ on purpose:
 * - `return next()` — its own `next()` unchanged (the very object) — passes the output below through
 *   as it is: a value stays a value (`streamed: false`), a streamed output stays streamed;
 * - `return next().pipe(...)` is the middleware's own Observable output, so it is streamed (`streamed:
 *   true`, the items it emits), even around a body that returned a plain value.
 *
 * A chain whose middleware and body answer at once stays synchronous (the result is out before
 * `subscribe()` returns), and one that waits follows the pipeline's `scheduler`: inside
 * `TestScheduler.run()` a body of `timer(10)` under `return next()` answers at frame 10.
 *
 * A middleware may wrap the body (a span, a timer), retry nothing (retries are the tool's `retry`, and
 * run the chain again; a `retry` on `next()` is refused, see {@link ExecuteNext}), and tighten the
 * body's signal and time limit through `next({ signal, timeoutMs })`. It may also end the attempt
 * with a typed outcome (`outcome.unknown`, `outcome.suspended`, `outcome.streamed`: see
 * `ExecuteOutcome`), returned or thrown, as a body may: that is not a failure of its own.
 *
 * Failures — told apart by identity: a rejection (or a stream error) with the very error the body
 * failed with (what `next()` rejected or errored with, passed on unchanged) is the body's failure, as if there were no chain
 * (`tool_error`, the tool's `retry` and `onError` apply). Anything else a middleware throws or rejects
 * with is its own failure, and fails the call closed, never retried, cancelling nothing:
 * - no body ran in this attempt → `denied`, `policy_error`, `stage: 'execute'`;
 * - after the body ran → `error`, `policy_error`, `stage: 'execute'`, the output withheld.
 * A middleware further out cannot undo such a failure: its `next()` fails with the error, and what
 * it returns then is not used. A call the chain answered counts as started (the chain is its
 * execution), with its attempts.
 *
 * Order: the pipeline's `execute` (outermost first), then the tool's `chains.execute`, then the body.
 *
 * @example
 * ```ts
 * const cache = new Map<string, unknown>();
 * const cached: ExecuteMiddleware = async (ctx, next) => {
 *   if (!ctx.tool.idempotent) return next(); // a promise resolving to the output: the output, as it is
 *   const key = `${ctx.tool.name} ${JSON.stringify(ctx.args)}`;
 *   if (cache.has(key)) return cache.get(key);
 *   const output = await next();
 *   cache.set(key, output);
 *   return output;
 * };
 * const pipeline = createPipeline({ tools, execute: [cached] });
 * ```
 */
export type ExecuteMiddleware<Args = unknown> = (ctx: ExecuteContext<Args>, next: ExecuteNext) => unknown;
