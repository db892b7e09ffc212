import type { Observable, OperatorFunction } from 'rxjs';
import type { PipelineEvent } from './events.js';
import type { ApprovalResponse, PendingApproval } from './pendingApproval.js';
import type { AnyTool } from './tool.js';
import type { ToolCall } from './toolCall.js';
import type { ToolResult } from './toolResult.js';

/**
 * Options of one run (one subscription of the operator).
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const results = pipeline.run(calls, { signal: controller.signal });
 * controller.abort(); // unfinished calls resolve as `cancelled`
 * ```
 */
export interface RunOptions {
  /**
   * Aborting (before the run or while it runs) cancels every unfinished call — in its policy chain,
   * awaiting approval, waiting or running — and the output completes once each has its result
   * (`cancelled`, reason `'aborted'`); no body starts after it. An array (any collection) given to `run()`
   * / `events()` is read to its end, so **every** call of it gets a result; a stream — an Observable
   * (`operator()`), an async iterable, a generator (it may be endless) — is read no further (not at all
   * if aborted before the run). To drop results instead, unsubscribe.
   */
  readonly signal?: AbortSignal;
  /**
   * Makes the batch a durable turn, journaled under this id (for example the conversation and the
   * model response: `${conversationId}/${responseId}`): its calls can be suspended for approval and the
   * turn resumed later, from another process, or after a crash (`pipeline.resume`). Needs the pipeline's
   * `journal` (a `ConfigError` otherwise). The turn's calls share one turn for cancel-rest, unless they
   * carry their own.
   */
  readonly turn?: string;
}

/**
 * Options of {@link Pipeline.resume}.
 *
 * @example
 * ```ts
 * const results = await pipeline.resume(turn, { answers: [{ token, answer: 'allowed-once' }] });
 * ```
 */
export interface ResumeOptions {
  /** Answers to pending approvals: any of them, in any order. Each token answers its call once. */
  readonly answers?: readonly ApprovalResponse[];
  /**
   * As for `run`: aborting cancels what has not finished, and the cancellations are journaled (a later
   * resume replays them). A call that waits for a human's approval this resume does not answer stays
   * suspended when the resume was aborted before it began: the abort ends the request, not the question.
   */
  readonly signal?: AbortSignal;
}

/** What `run` accepts: any finite or streaming source of calls (an array or any iterable, an async iterable, an Observable). */
export type CallSource = Iterable<ToolCall> | AsyncIterable<ToolCall> | Observable<ToolCall>;

/**
 * A configured pipeline. It holds no state of its own: every subscription of `operator()` and every
 * `run()` is an independent batch with its own pool, indices and cancellation.
 *
 * @example
 * ```ts
 * const pipeline = createPipeline({ tools: [readFile, writeFile] });
 * calls$.pipe(pipeline.operator()).subscribe(sendToModel);
 * ```
 */
export interface Pipeline {
  /** The tools, as configured. */
  readonly tools: readonly AnyTool[];
  /** The tools this pipeline's calls may use: `tools` with the restrictions applied. Offer these to the model. */
  readonly available: readonly AnyTool[];
  /**
   * The pipeline as an RxJS operator: one `ToolResult` per call, in input order; once `options.signal`
   * aborted, nothing more is read. Each subscription is a run of its own.
   *
   * When the source errors, the output errors with a {@link SourceError} (after the results of the
   * calls taken in), as `run` rejects. Its `results` is empty: the subscriber has had each one, and a
   * long-lived subscription keeps no result; `answered` counts them. A durable turn's
   * `DurableTurnError` passes through as in `run`. For a conversation, `switchTurns` and `queueTurns`
   * run each turn as a subscription of its own.
   */
  operator(options?: RunOptions): OperatorFunction<ToolCall, ToolResult>;
  /**
   * Runs a batch without RxJS and resolves to its results in input order. An async iterable source is
   * pulled with backpressure: at most `maxPending + concurrency` calls are taken in and unanswered, so a
   * fast stream behind one slow call waits instead of filling memory; so is an array or a generator
   * (pushed at once instead in a durable turn). Neither is held back when a tool has `start:
   * 'after-response'`: its calls wait for the source's end, so the source is read as fast as it comes.
   * An Observable is pushed: it cannot be slowed down, only buffered.
   * Aborted, every call of an array gets a result; a stream is read no further ({@link RunOptions.signal}).
   * @throws {SourceError} (as a rejection) when the source fails midway; it holds the results so far.
   */
  run(calls: CallSource, options?: RunOptions): Promise<ToolResult[]>;
  /**
   * Runs a batch like `run` (same source kinds, same options, same backpressure) and emits what happens
   * to each call as it happens: `received`, `decided`, `approval-requested`, `approval-answered`,
   * `started`, `progress`, `finished` (completion order), and `result` (model order; these carry
   * exactly the results `run` would resolve to). What a UI subscribes to; see {@link PipelineEvent}.
   * Each subscription is a run of its own; unsubscribing drops the rest, as for `operator()`; an abort
   * reads the source as `run` does (a `result` for every call of an array).
   * The stream errors with a {@link SourceError} when the source fails (after the results of the calls
   * taken in), like `run`.
   *
   * @example
   * ```ts
   * pipeline.events(calls).subscribe((e) => {
   *   if (e.type === 'started') console.log(`▶ #${e.index} ${e.name}`);
   *   if (e.type === 'progress') console.log(`  #${e.index}`, e.value);
   * });
   * ```
   */
  events(calls: CallSource, options?: RunOptions): Observable<PipelineEvent>;
  /**
   * Picks a durable turn up again — answered approvals, or after the process that ran it stopped — and
   * resolves to the whole turn's results, in order: finished calls are replayed from the journal (never
   * run again), the others run with today's policies (which can only tighten what was decided), a
   * call whose answer is given runs once with the arguments it was approved for, and a call that had
   * started but not finished runs again only if its tool is `idempotent` (`outcome_unknown` otherwise).
   * @throws {DurableTurnError} (as a rejection) for an unknown turn, a live lease, or a bad token;
   *   nothing runs then. {@link ConfigError} without a journal.
   */
  resume(turn: string, options?: ResumeOptions): Promise<ToolResult[]>;
  /** The approvals a durable turn waits for, with the tokens that answer them. */
  pendingApprovals(turn: string): Promise<PendingApproval[]>;
}
