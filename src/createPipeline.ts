import { defer, from, isObservable, Observable, type OperatorFunction } from 'rxjs';
import type { AnyTool } from './defineTool.js';
import { ConfigError, SourceError } from './errors.js';
import { availableTools, resolvePipelineOptions, type PipelineOptions, type PipelineSettings } from './options.js';
import type { ToolCall } from './toolCall.js';
import type { ToolResult } from './toolResult.js';
import { BatchCancel } from './internal/batchCancel.js';
import { bindToPipeline } from './internal/pipelineAware.js';
import { pullCalls } from './internal/pullCalls.js';
import { stopWhenAborted } from './internal/stopWhenAborted.js';
import { executeCalls } from './stages/execute.js';
import { guard } from './stages/guard.js';
import { intake } from './stages/intake.js';
import { postExecute } from './stages/postExecute.js';
import { preExecute } from './stages/preExecute.js';
import { reorderByIndex } from './stages/reorder.js';
import { toResults } from './stages/result.js';

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
   * Aborting stops taking in calls and cancels every unfinished one — in its policy chain, awaiting
   * approval, waiting or running — and the output completes: each call already taken in still gets a
   * result (`cancelled`, reason `'aborted'`). To drop results instead, unsubscribe.
   */
  readonly signal?: AbortSignal;
}

/** What `run` accepts: any finite or streaming source of calls. */
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
  /** The pipeline as an RxJS operator: one `ToolResult` per call, in input order. */
  operator(options?: RunOptions): OperatorFunction<ToolCall, ToolResult>;
  /**
   * Runs a batch without RxJS and resolves to its results in input order. An async iterable source is
   * pulled with backpressure: at most `maxPending + concurrency` calls are taken in and unanswered, so a
   * fast stream behind one slow call waits instead of filling memory. (An Observable is pushed: it
   * cannot be slowed down, only buffered.)
   * @throws {SourceError} (as a rejection) when the source fails midway; it holds the results so far.
   */
  run(calls: CallSource, options?: RunOptions): Promise<ToolResult[]>;
}

/**
 * Build a pipeline: intake → pre-execute → guard → execute → post-execute → result → reorder.
 * Options are validated now, so a misconfiguration throws here rather than on the first call.
 *
 * @throws {ConfigError} naming the first invalid option.
 *
 * @example
 * ```ts
 * import { createPipeline, defineTool } from 'toolstream';
 * import { z } from 'zod';
 *
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Add two numbers',
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   mode: 'parallel',
 *   execute: ({ a, b }) => a + b,
 * });
 *
 * const pipeline = createPipeline({ tools: [add], concurrency: 4 });
 * const results = await pipeline.run([
 *   { id: '1', name: 'add', args: '{"a":1,"b":2}' },
 *   { id: '2', name: 'add', args: { a: 'x' } },
 * ]);
 * // results[0].content === '3'; results[1].error.code === 'invalid_args'
 * ```
 */
export function createPipeline(options: PipelineOptions): Pipeline {
  const settings = bindToPipeline(resolvePipelineOptions(options));
  const tools = Object.freeze([...settings.tools.values()]);
  const available = Object.freeze(availableTools(settings, tools));

  const operator = (runOptions: RunOptions = {}): OperatorFunction<ToolCall, ToolResult> => {
    const signal = checkSignal(runOptions);
    return (calls) => calls.pipe(runStages(settings, signal), reorderByIndex());
  };

  // An async iterable is pulled with backpressure: at most this many calls taken in and unanswered.
  const pullLimit = settings.maxPending + settings.concurrency;

  const run = async (calls: CallSource, runOptions?: RunOptions): Promise<ToolResult[]> => {
    const pulled = isPullable(calls) ? pullCalls(calls, pullLimit) : undefined;
    const source = pulled?.calls ?? toObservable(calls);
    const results$ = source.pipe(operator(runOptions));
    return new Promise((resolve, reject) => {
      const results: ToolResult[] = [];
      results$.subscribe({
        next: (result) => {
          results.push(result);
          pulled?.answered();
        },
        error: (error: unknown) => reject(new SourceError(results, error)),
        complete: () => resolve(results),
      });
    });
  };

  return Object.freeze({ tools, available, operator, run });
}

/**
 * Every stage but the reordering: results come out as calls finish. Each subscription is a batch of
 * its own. (A program's sub-calls run through this, so a quick result is not held behind a slow one.)
 */
export function runStages(settings: PipelineSettings, signal: AbortSignal | undefined): OperatorFunction<ToolCall, ToolResult> {
  return (calls) =>
    defer(() => {
      // Per subscription: the execute stage cancels the batch, the policy stages before it follow.
      const batch = new BatchCancel();
      return calls.pipe(
        stopWhenAborted(signal),
        intake(settings),
        preExecute(settings, batch),
        guard(settings, batch),
        executeCalls(settings, signal, batch),
        postExecute(settings, signal),
        toResults(settings.observers, settings.onObserverError),
      );
    });
}

/**
 * The pipeline as an operator in one step: `executeTools(options)` is
 * `createPipeline(options).operator()`.
 *
 * @example
 * ```ts
 * toolCalls$.pipe(executeTools({ tools: [readFile], concurrency: 4 })).subscribe(console.log);
 * ```
 */
export function executeTools(options: PipelineOptions, runOptions?: RunOptions): OperatorFunction<ToolCall, ToolResult> {
  return createPipeline(options).operator(runOptions);
}

function checkSignal(options: RunOptions): AbortSignal | undefined {
  const { signal } = options ?? {};
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ConfigError('run', 'signal', 'an AbortSignal', signal);
  }
  return signal;
}

/** An async iterable that is not an Observable (those are pushed, not pulled). */
function isPullable(calls: CallSource): calls is AsyncIterable<ToolCall> {
  return typeof calls === 'object' && calls !== null && !isObservable(calls) && Symbol.asyncIterator in calls;
}

function toObservable(calls: CallSource): Observable<ToolCall> {
  if (isObservable(calls)) return calls;
  if (
    typeof calls === 'object' &&
    calls !== null &&
    (Symbol.iterator in calls || Symbol.asyncIterator in calls)
  ) {
    return from(calls);
  }
  throw new ConfigError('run', 'calls', 'an array, iterable, async iterable or Observable of calls', calls);
}
