// Events: what happens to each call of a run, and the observers that watch them. (A leaf: imports only from types/.)
import type { Decision } from './decision.js';
import type { JsonValue } from './json.js';
import type { ToolError } from './toolError.js';
import type { ResultStatus, ToolResult } from './toolResult.js';

/**
 * What every event says about its call. `at` is on the pipeline's clock, like a result's `timing`, so
 * events and results can be laid on one time axis: `performance.now()` in real time, the scheduler's
 * `now()` when the pipeline's `scheduler` is a virtual one (a frame of a `TestScheduler`).
 *
 * @example
 * ```ts
 * const line = (e: PipelineEventBase) => `${e.at.toFixed(0)} ms #${e.index} ${e.name} (${e.id})`;
 * ```
 */
export interface PipelineEventBase {
  /** The call's arrival index in its run, as in `result.index`. */
  readonly index: number;
  /** The call's id, as the model sent it. */
  readonly id: string;
  /** The tool's name, as the model sent it. */
  readonly name: string;
  /** The call's turn (`result.turn`). */
  readonly turn: string | undefined;
  /** When it happened, in milliseconds on the pipeline's clock (`performance.now()`, or a virtual scheduler's frame). */
  readonly at: number;
}

/**
 * One thing that happened to one call of a run, discriminated on `type`. For each call, in this order:
 *
 * - `received` — once, after intake (its arguments parsed, or the call already failed there);
 * - `decided` — once, if the pre-execute policies decided it (not for a call that failed at intake);
 * - `approval-requested`, `approval-answered` — when the decision was `ask` and an approver was asked;
 * - `started` — once, when its body starts (never for a call that did not run);
 * - `progress` — any number, from `ctx.progress(value)` while the body runs;
 * - `retry` — an attempt of a tool with `retry` failed and another is due (see {@link PipelineRetryEvent});
 * - `finished` — once, in completion order, with the result;
 * - `result` — once, in model order: the results `run` resolves to, in the same order.
 *
 * @example
 * ```ts
 * pipeline.events(calls).subscribe((e) => {
 *   if (e.type === 'progress') console.log(`#${e.index} ${e.name}:`, e.value);
 *   if (e.type === 'result') send(e.result);
 * });
 * ```
 */
export type PipelineEvent =
  | PipelineReceivedEvent
  | PipelineDecidedEvent
  | PipelineApprovalRequestedEvent
  | PipelineApprovalAnsweredEvent
  | PipelineStartedEvent
  | PipelineProgressEvent
  | PipelineRetryEvent
  | PipelineFinishedEvent
  | PipelineResultEvent;

/**
 * The call was taken in.
 *
 * @example
 * ```ts
 * if (e.type === 'received' && e.done) console.log(`#${e.index} ${e.name} failed at intake`);
 * ```
 */
export interface PipelineReceivedEvent extends PipelineEventBase {
  readonly type: 'received';
  /** The call already has its outcome: intake failed it (unknown tool, invalid arguments…), or a resume replayed it. */
  readonly done: boolean;
}

/**
 * The pre-execute policies decided the call: `allow`, `ask` (an approver is asked next) or `deny`.
 *
 * @example
 * ```ts
 * if (e.type === 'decided' && e.decision === 'deny') console.log(`#${e.index} denied by ${e.decidedBy}`);
 * ```
 */
export interface PipelineDecidedEvent extends PipelineEventBase {
  readonly type: 'decided';
  readonly decision: Decision;
  /** The policy whose decision set the final level, `'(default)'` for `defaultDecision`. */
  readonly decidedBy: string;
  readonly reasons: readonly string[];
}

/**
 * The approver is being asked about the call (a UI shows the question until `approval-answered`).
 *
 * @example
 * ```ts
 * if (e.type === 'approval-requested') showPrompt(e.id, e.reasons);
 * ```
 */
export interface PipelineApprovalRequestedEvent extends PipelineEventBase {
  readonly type: 'approval-requested';
  readonly reasons: readonly string[];
}

/**
 * The question was answered, withdrawn or timed out: `approved` says whether the call may run;
 * `answer` is `'allowed-once'`, `'suspend'`, or the `approval_*` code of the denial.
 *
 * @example
 * ```ts
 * if (e.type === 'approval-answered') hidePrompt(e.id, e.approved);
 * ```
 */
export interface PipelineApprovalAnsweredEvent extends PipelineEventBase {
  readonly type: 'approval-answered';
  readonly approved: boolean;
  readonly answer: string;
}

/**
 * The call's body started (it holds a pool slot from now until `finished`).
 *
 * @example
 * ```ts
 * if (e.type === 'started') console.log(`▶ #${e.index} ${e.name}`);
 * ```
 */
export interface PipelineStartedEvent extends PipelineEventBase {
  readonly type: 'started';
}

/**
 * A value the body reported with `ctx.progress(value)`: a JSON copy taken when it was reported. A
 * value whose JSON text is over the pipeline's `progress.maxChars` is replaced by that text, cut (a
 * string ending in an omission note), with `truncated: true`.
 *
 * @example
 * ```ts
 * if (e.type === 'progress' && !e.truncated) bar.update(e.value);
 * ```
 */
export interface PipelineProgressEvent extends PipelineEventBase {
  readonly type: 'progress';
  readonly value: JsonValue;
  readonly truncated: boolean;
  /** This call's progress reports so far, this one included (1, 2, …). */
  readonly sequence: number;
}

/**
 * An attempt of the call failed and another is due in `delayMs` (the tool's `retry`): between the
 * call's one `started` and its one `finished`, once per failed attempt that is to be repeated. A call
 * cancelled during the delay has no further attempt. The same failure is in the result's trace
 * (`event: 'attempt_failed'`).
 *
 * @example
 * ```ts
 * if (e.type === 'retry') console.log(`#${e.index} attempt ${e.attempt} failed (${e.error.code}); again in ${e.delayMs} ms`);
 * ```
 */
export interface PipelineRetryEvent extends PipelineEventBase {
  readonly type: 'retry';
  /** The attempt that failed: 1 for the first. */
  readonly attempt: number;
  readonly error: ToolError;
  readonly delayMs: number;
}

/**
 * The call's result is built (completion order: a quick call finishes before a slow one ahead of it).
 *
 * @example
 * ```ts
 * if (e.type === 'finished') console.log(`■ #${e.index} ${e.name}: ${e.status}`);
 * ```
 */
export interface PipelineFinishedEvent extends PipelineEventBase {
  readonly type: 'finished';
  readonly status: ResultStatus;
  readonly result: ToolResult;
}

/**
 * The call's result in model order: these events, in order, carry exactly what `run` resolves to.
 *
 * @example
 * ```ts
 * const results = (await lastValueFrom(pipeline.events(calls).pipe(toArray())))
 *   .flatMap((e) => (e.type === 'result' ? [e.result] : []));
 * ```
 */
export interface PipelineResultEvent extends PipelineEventBase {
  readonly type: 'result';
  readonly result: ToolResult;
}

/**
 * An observer of every event of every run of a pipeline (`observers: [{ event(e) { … } }]`), beside
 * result observers (plain functions, which see each result as it is built). Its `event` is called
 * synchronously as each event happens, for `run`, `operator()` and `events()` alike. A throw disturbs
 * nothing: it becomes a process warning (type `ToolstreamObserverWarning`, code
 * `TOOLSTREAM_OBSERVER_ERROR`, as for result observers by default; `onObserverError` is for result
 * observers only, since most events have no result to pass it).
 *
 * @example
 * ```ts
 * const progressLog: EventObserver = { event: (e) => e.type === 'progress' && console.log(e.value) };
 * const pipeline = createPipeline({ tools, observers: [otelSpans(tracer), progressLog] });
 * ```
 */
export interface EventObserver {
  /** Called synchronously with each event, as it happens. */
  event(event: PipelineEvent): void;
}

/**
 * What `observers` holds: result observers (functions, as `otelSpans` returns) and event observers.
 *
 * @example
 * ```ts
 * const observers: ToolObserver[] = [(result) => metrics.record(result), { event: (e) => ui.push(e) }];
 * ```
 */
export type ToolObserver = ((result: ToolResult) => void) | EventObserver;

/**
 * How much progress one call may report (`progress` in the pipeline's options), resolved: what the
 * events layer enforces and the engine's settings carry.
 *
 * @example
 * ```ts
 * const limits: ProgressLimits = { maxChars: 10_000, maxEvents: 1000 };
 * ```
 */
export interface ProgressLimits {
  /** Characters of a value's JSON text; a longer one is cut. */
  readonly maxChars: number;
  /** Progress events per call; later reports are dropped. */
  readonly maxEvents: number;
}
