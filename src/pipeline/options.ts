import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { ConfigError } from '../util/errors.js';
import { isCount, isPositiveDuration, MAX_TIMER_MS } from '../util/validate.js';
import type { PipelineSettings } from '../engine/settings.js';
import type { EventSettings } from '../observe/eventLayer.js';
import { RestrictionSet } from '../util/restrictionSet.js';
import type { Decision } from '../types/decision.js';
import type { EventObserver, ToolObserver } from '../types/events.js';
import type { ExecuteMiddleware } from '../types/execute.js';
import type { JournalStore } from '../types/journal.js';
import type { Approver, PostPolicy, PrePolicy } from '../types/policy.js';
import type { ResultMiddleware } from '../types/resultChain.js';
import type { RetentionBudget } from '../types/retention.js';
import type { AnyTool, OnError } from '../types/tool.js';
import type { ToolResult } from '../types/toolResult.js';
import { warnObserverError } from '../util/observerWarning.js';
import { isLayerObserver, type LayerObserver } from '../util/layerObserver.js';
import { clockOf } from '../stream/clock.js';

/**
 * Options of {@link createPipeline}. Every field is validated when the pipeline is built.
 *
 * @example
 * ```ts
 * const options: PipelineOptions = {
 *   tools: [readFile, writeFile],
 *   concurrency: 4,
 *   onError: 'continue',
 *   defaultTimeoutMs: 30_000,
 * };
 * ```
 */
export interface PipelineOptions {
  /** The tools the model may call, built with `defineTool`. Names must be unique. */
  readonly tools: readonly AnyTool[];
  /**
   * How many tool bodies may run at once within one subscription (parallel calls share the pool; an
   * exclusive call runs alone).
   * @default 10
   */
  readonly concurrency?: number;
  /**
   * What a failed call (throw, rejection, timeout) does to the other unfinished calls of its turn
   * (`ToolCall.turn`; calls without one share the subscription's turn). A tool's own `onError`
   * overrides it. Unset, the tool's mode decides: a failing `parallel` call (a read, a lookup) cancels
   * nothing — the model sees the one failure and its siblings' results; a failing `exclusive` call (a
   * write, a command) cancels the rest of its turn, whose calls may have depended on it. Set
   * `'cancel-rest'` for "any failure cancels the rest of its turn", `'continue'` for "nothing does".
   * @default by the tool's mode
   */
  readonly onError?: OnError;
  /**
   * Bounds memory behind one slow call: while this many results wait (finished, but held for model
   * order behind an earlier call whose result is not out yet — in the reorder buffer, or still passing
   * the post policies, the `result` chain or a journal write), no new body starts — except that
   * earliest call itself, and any call when nothing runs and no result is on its way, so the batch
   * always progresses. So at most `maxPending + concurrency` results of calls that ran are held at once
   * (`maxPending + concurrency - 2` when nothing after the body takes time) — while the earliest call
   * can start when its turn comes (it is not still in the policy stages: an approval, a slow policy)
   * and no call waits at a `limit`, `rateLimit` or `after-response` gate. Otherwise the pool starts one
   * call at a time whenever nothing runs, so that nothing deadlocks, and only a pulled source (`run`,
   * `events`: at most `maxPending + concurrency` calls taken in and unanswered) bounds memory. Lower it
   * to cap memory, raise it (or `Infinity`) to keep the pool busy behind a straggler.
   * @default 1000
   */
  readonly maxPending?: number;
  /**
   * Time limit of a tool body, for tools without their own `timeoutMs`: past it the body's signal
   * aborts and the call is answered `timeout`. `Infinity` sets no limit (then a body that never
   * settles holds its call, and the barriers behind it, forever).
   * @default 300000 (5 minutes)
   */
  readonly defaultTimeoutMs?: number;
  /**
   * After a body's signal aborted (timeout, cancellation), how long its slot stays taken while the body
   * winds down. A body that honours its signal frees the slot as soon as it settles; one that ignores it
   * is abandoned after this long, so a hung tool cannot stall the pool forever. `Infinity` never
   * abandons: slots are only freed by bodies settling.
   * @default 1000
   */
  readonly abortGraceMs?: number;
  /**
   * The pipeline's clock and timers. Every timer, wait and deadline of the pipeline (time limits, the
   * abort grace, retry backoff, rate-limit windows, policy and approval deadlines, a durable turn's
   * lease renewal) runs on it, and every time it reports is read from it: each `timing` figure of a
   * result and each event's `at`. So a test passes a virtual-time scheduler (a `TestScheduler` inside
   * `run()`) and gets them all in exact frames. In real time (RxJS's async, asap, queue or
   * animationFrame scheduler) the times are `performance.now()`, sub-millisecond. Pass the
   * `TestScheduler` itself: left at the default, a pipeline inside `run()` has its timers in frames (RxJS
   * patches `asyncScheduler` there) but still reads its times from `performance.now()`. A real-time
   * scheduler from a second copy of RxJS (a CommonJS and an ES module build loaded side by side) counts
   * as virtual: its times are its own `now()`, whole milliseconds since the epoch.
   *
   * What stays on the wall clock, whatever the scheduler: times written for other processes or read
   * as dates — a durable turn's journal `at` times, the lease expiry kept in the store, approval token
   * expiry, the fleet's job expiries and locks — and the limits of real work in a real thread: a code
   * runtime's `timeoutMs` and its `settleMs`.
   * @default asyncScheduler
   */
  readonly scheduler?: SchedulerLike;

  /**
   * Pre-execute policies, run as a waterfall in this order for every admitted call. See {@link PrePolicy}.
   * @default []
   */
  readonly pre?: readonly PrePolicy[];
  /** The decision when no pre-execute policy decides. @default 'allow' */
  readonly defaultDecision?: Decision;
  /**
   * Asked for every call whose final decision is `ask`; an approval admits that one call. Without an
   * approver, `ask` denies (`approval_unavailable`).
   */
  readonly approve?: Approver;
  /**
   * How long an approval may take before the call is denied (`approval_timeout`) and the approver's
   * signal aborts. `Infinity` sets no limit.
   * @default 600000 (10 minutes)
   */
  readonly approvalTimeoutMs?: number;
  /**
   * How long one call's pre-execute chain, or its post-execute chain, may take. Past it the chain fails
   * closed (`policy_error`, naming the policy still pending) and the policies' `ctx.signal` aborts: a
   * policy that never settles cannot hold a call, or the barriers behind it, forever.
   * `Infinity` sets no limit.
   * @default 30000
   */
  readonly policyTimeoutMs?: number;
  /**
   * Post-execute policies, run as a waterfall over every result (failed ones too). See {@link PostPolicy}.
   * @default []
   */
  readonly post?: readonly PostPolicy[];
  /**
   * Execute middleware, outermost first: a waterfall around each attempt of every call's body, inside
   * its pool slot and after its start checks — a cache, a timer, a span. A tool's own
   * (`chains.execute`) run inside these. See {@link ExecuteMiddleware}.
   * @default []
   */
  readonly execute?: readonly ExecuteMiddleware[];
  /**
   * Result middleware, outermost first: the final wrapping of every result before it is frozen —
   * redact, add metadata, count. A tool's own (`chains.result`) run inside these. See {@link ResultMiddleware}.
   * @default []
   */
  readonly result?: readonly ResultMiddleware[];
  /**
   * Told about every result as it is built (before the reorder buffer), for metrics and tracing (for
   * traces, see `toolTracing()` of `toolstream/otel` below). An observer that throws disturbs nothing: the result is delivered all the same, and
   * the error goes to `onObserverError`. An object with an `event(e)` method ({@link EventObserver})
   * is told every lifecycle event of every run instead (what `pipeline.events()` emits), as it happens.
   * A layer observer ({@link LayerObserver}: `toolTracing()` of `toolstream/otel`) watches each run
   * from inside, as a layer (a span per call, the body inside it).
   * @default []
   */
  readonly observers?: readonly (ToolObserver | LayerObserver)[];
  /**
   * Told when an observer throws, with the error and the result it was observing. Whatever it does —
   * even throwing itself — the stream goes on and the process does not crash.
   * @default a process warning (`process.emitWarning`, type `ToolstreamObserverWarning`, code `TOOLSTREAM_OBSERVER_ERROR`); `console.warn` in a runtime without `process` (a browser, a Worker)
   */
  readonly onObserverError?: (error: unknown, result: ToolResult) => void;
  /**
   * How much a body may report with `ctx.progress(value)`, per call: a value whose JSON text is over
   * `maxChars` is cut (the event then carries the cut text, `truncated: true`); reports after
   * `maxEvents` are dropped (bounded in count, not rate: a UI should render the latest).
   * @default { maxChars: 10_000, maxEvents: 1000 }
   */
  readonly progress?: { readonly maxChars?: number; readonly maxEvents?: number };
  /** Which tools this scope may call; calls to others get a `restricted` result at intake. */
  readonly restrictions?: RestrictionSet;
  /**
   * Makes turns durable: with a journal, `run(calls, { turn })` writes every call's life ahead of its
   * effect, an approver may `'suspend'` a call to be answered later through `resume` — from another
   * request or process sharing the store — and a turn cut short by a crash is resumed without running
   * a finished call again, nor a started one unless its tool is `idempotent`. See `memoryJournal()`
   * and `sqliteJournal()` (`toolstream/sqlite`).
   */
  readonly journal?: JournalStore;
  /**
   * Signs approval tokens (HMAC-SHA256); required with a `journal`, at least 32 bytes. Every process
   * that resumes the turns must have the same secret; keep it out of the model's reach.
   */
  readonly approvalSecret?: string | Uint8Array;
  /** How long a pending approval's token is accepted. @default 86400000 (24 hours) */
  readonly approvalTtlMs?: number;
  /**
   * How long a turn's lease lasts unless renewed (it is renewed every third of that while the turn
   * runs): after a crash, the turn can be resumed this long after the last renewal.
   * @default 30000
   */
  readonly leaseMs?: number;
  /** Output budgets: `default` for every tool, `tools[name]` for one. Applied after post-execute policies. */
  readonly retention?: {
    readonly default?: RetentionBudget;
    readonly tools?: Readonly<Record<string, RetentionBudget>>;
  };
}

/** `defaultTimeoutMs` unless set: a body that never settles is answered after 5 minutes. */
export const DEFAULT_TIMEOUT_MS = 300_000;
/** `approvalTimeoutMs` unless set: a question nobody answers denies after 10 minutes. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 600_000;

/** The engine's settings and the events layer's, resolved from one `PipelineOptions`. */
export interface ResolvedOptions {
  readonly settings: PipelineSettings;
  readonly events: EventSettings;
  /** The layer observers, in the order given: each run asks each for its hooks. */
  readonly layers: readonly LayerObserver[];
}

/** The engine's settings from `options` (validating all of them). @throws {ConfigError} naming the first bad option. */
export function resolvePipelineOptions(options: PipelineOptions): PipelineSettings {
  return resolveOptions(options).settings;
}

/**
 * Validates `options` and fills in defaults: the engine's settings, and the events layer's options
 * (one pass, so the first bad option is named whichever part it belongs to).
 * @throws {ConfigError} naming the first bad option.
 */
export function resolveOptions(options: PipelineOptions): ResolvedOptions {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('createPipeline', option, expected, received);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  const {
    tools,
    concurrency = 10,
    maxPending = 1000,
    onError,
    defaultTimeoutMs = DEFAULT_TIMEOUT_MS,
    abortGraceMs = 1000,
    scheduler = asyncScheduler,
  } = options;

  if (!Array.isArray(tools)) fail('tools', 'an array of tools made by defineTool', tools);
  const byName = new Map<string, AnyTool>();
  tools.forEach((tool: unknown, i) => {
    if (!isTool(tool)) return fail(`tools[${i}]`, 'a tool made by defineTool', tool);
    if (byName.has(tool.name)) return fail(`tools[${i}].name`, 'unique among the tools', tool.name);
    byName.set(tool.name, tool);
  });
  if (!isCount(concurrency, 1)) {
    fail('concurrency', 'a positive integer or Infinity', concurrency);
  }
  if (!isCount(maxPending, 1)) {
    fail('maxPending', 'a positive integer or Infinity', maxPending);
  }
  if (onError !== undefined && onError !== 'cancel-rest' && onError !== 'continue') fail('onError', '"cancel-rest" or "continue"', onError);
  if (defaultTimeoutMs !== Infinity && !isPositiveDuration(defaultTimeoutMs)) {
    fail('defaultTimeoutMs', `1 to ${MAX_TIMER_MS} milliseconds, or Infinity for no limit`, defaultTimeoutMs);
  }
  if (!(abortGraceMs === Infinity || abortGraceMs === 0 || isPositiveDuration(abortGraceMs))) {
    fail('abortGraceMs', `0 to ${MAX_TIMER_MS} milliseconds, or Infinity`, abortGraceMs);
  }
  if (typeof scheduler?.schedule !== 'function' || typeof scheduler.now !== 'function') {
    fail('scheduler', 'an RxJS SchedulerLike', scheduler);
  }

  const {
    pre = [],
    post = [],
    execute = [],
    result = [],
    defaultDecision = 'allow',
    approve,
    approvalTimeoutMs = DEFAULT_APPROVAL_TIMEOUT_MS,
    policyTimeoutMs = 30_000,
    restrictions,
    retention,
    observers = [],
    onObserverError = warnObserverError,
    progress = {},
  } = options;
  if (!Array.isArray(observers) || !observers.every((observer) => typeof observer === 'function' || isEventObserver(observer) || isLayerObserver(observer))) {
    fail('observers', 'an array of result observers (result) => void, event observers { event(e) } and layer observers (toolTracing())', observers);
  }
  if (typeof progress !== 'object' || progress === null) fail('progress', 'an object { maxChars?, maxEvents? }', progress);
  const { maxChars: progressChars = 10_000, maxEvents: progressEvents = 1000 } = progress;
  if (!isCount(progressChars, 1)) fail('progress.maxChars', 'a positive integer or Infinity', progressChars);
  if (!isCount(progressEvents, 0)) fail('progress.maxEvents', 'a non-negative integer or Infinity', progressEvents);
  if (typeof onObserverError !== 'function') fail('onObserverError', 'a function (error, result) => void', onObserverError);
  const preNames = middlewareNames('pre', pre, 'pre-execute policies', 'a policy function (ctx, next) => decision', fail);
  const postNames = middlewareNames('post', post, 'post-execute policies', 'a policy function (ctx, next) => decision', fail);
  const executeNames = middlewareNames('execute', execute, 'execute middleware', 'an execute middleware (ctx, next) => output', fail);
  const resultNames = middlewareNames('result', result, 'result middleware', 'a result middleware (draft, next) => void', fail);
  if (defaultDecision !== 'allow' && defaultDecision !== 'ask' && defaultDecision !== 'deny') {
    fail('defaultDecision', '"allow", "ask" or "deny"', defaultDecision);
  }
  if (approve !== undefined && typeof approve !== 'function') fail('approve', 'a function', approve);
  if (approvalTimeoutMs !== Infinity && !isPositiveDuration(approvalTimeoutMs)) {
    fail('approvalTimeoutMs', `1 to ${MAX_TIMER_MS} milliseconds, or Infinity for no limit`, approvalTimeoutMs);
  }
  if (policyTimeoutMs !== Infinity && !isPositiveDuration(policyTimeoutMs)) {
    fail('policyTimeoutMs', `1 to ${MAX_TIMER_MS} milliseconds, or Infinity for no limit`, policyTimeoutMs);
  }
  if (restrictions !== undefined && !(restrictions instanceof RestrictionSet)) {
    fail('restrictions', 'a RestrictionSet', restrictions);
  }
  const budgets = new Map<string, RetentionBudget>();
  if (retention !== undefined) {
    if (typeof retention !== 'object' || retention === null) fail('retention', 'an object', retention);
    const { default: fallback, tools: perTool = {} } = retention;
    if (typeof perTool !== 'object' || perTool === null) fail('retention.tools', 'an object of budgets by tool name', perTool);
    if (fallback !== undefined) checkBudget('retention.default', fallback, fail);
    for (const [name, budget] of Object.entries(perTool)) {
      if (!byName.has(name)) fail(`retention.tools.${name}`, 'the name of a configured tool', name);
      checkBudget(`retention.tools.${name}`, budget, fail);
    }
    for (const name of byName.keys()) {
      const budget = Object.hasOwn(perTool, name) ? perTool[name] : fallback;
      if (budget !== undefined) budgets.set(name, budget);
    }
  }
  // One clock for the whole pipeline, the engine's and the events layer's: their times share one axis.
  const clock = clockOf(scheduler);
  const settings: PipelineSettings = {
    tools: byName,
    concurrency,
    maxPending,
    onError,
    defaultTimeoutMs: defaultTimeoutMs === Infinity ? undefined : defaultTimeoutMs,
    abortGraceMs,
    scheduler,
    clock,
    pre,
    preNames,
    defaultDecision,
    approve,
    approvalTimeoutMs: approvalTimeoutMs === Infinity ? undefined : approvalTimeoutMs,
    policyTimeoutMs: policyTimeoutMs === Infinity ? undefined : policyTimeoutMs,
    post,
    postNames,
    execute: Object.freeze([...execute]),
    executeNames,
    result: Object.freeze([...result]),
    resultNames,
    restrictions,
    observers: observers.filter((observer): observer is ToolObserver & ((result: ToolResult) => void) => typeof observer === 'function'),
    onObserverError,
    retention: budgets,
  };
  const events: EventSettings = { observers: observers.filter((observer) => !isLayerObserver(observer) && isEventObserver(observer)), progress: { maxChars: progressChars, maxEvents: progressEvents }, clock };
  return { settings, events, layers: observers.filter(isLayerObserver) };
}

type Fail = (option: string, expected: string, received: unknown) => never;

/** The names of a chain's functions for traces and messages (the function's name, else `option[i]`). */
function middlewareNames(option: string, list: unknown, what: string, expected: string, fail: Fail): string[] {
  if (!Array.isArray(list)) fail(option, `an array of ${what}`, list);
  return (list as unknown[]).map((entry, i) => {
    if (typeof entry !== 'function') return fail(`${option}[${i}]`, expected, entry);
    return entry.name || `${option}[${i}]`;
  });
}

function checkBudget(option: string, budget: RetentionBudget, fail: Fail): void {
  if (typeof budget !== 'object' || budget === null) fail(option, 'a retention budget object', budget);
  // Items may be 0 (count them all, keep none); a text budget of 0 would leave only the note.
  for (const [key, least] of [['maxItems', 0], ['maxChars', 1], ['maxLines', 1]] as const) {
    const limit = budget[key];
    if (limit !== undefined && !isCount(limit, least)) {
      fail(`${option}.${key}`, least === 0 ? 'a non-negative integer or Infinity' : 'a positive integer or Infinity', limit);
    }
  }
  if (budget.keep !== undefined && budget.keep !== 'head' && budget.keep !== 'head+tail') {
    fail(`${option}.keep`, '"head" or "head+tail"', budget.keep);
  }
}

function isEventObserver(value: unknown): value is EventObserver {
  return typeof value === 'object' && value !== null && typeof (value as Partial<EventObserver>).event === 'function';
}

function isTool(value: unknown): value is AnyTool {
  if (typeof value !== 'object' || value === null) return false;
  const tool = value as Partial<AnyTool>;
  return typeof tool.name === 'string' && typeof tool.execute === 'function' && Object.isFrozen(value);
}
