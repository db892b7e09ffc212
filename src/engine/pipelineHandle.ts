import type { OperatorFunction } from 'rxjs';
import { DEFAULT_BATCH, type BatchOptions } from './pool/batchOptions.js';
import { runStages } from './runStages.js';
import { availableTools, type PipelineSettings } from './settings.js';
import type { AnyTool } from '../types/tool.js';
import type { ToolCall } from '../types/toolCall.js';
import type { ToolResult } from '../types/toolResult.js';

/**
 * What a tool registered in a pipeline may use of that pipeline (a pipeline-aware tool: `run_code`,
 * whose program's calls go through the same stages as the model's): the tools it offers, the bound it
 * sets on bodies at once, and batches of calls of its own through its stages. Not the pipeline's
 * settings: the tool sees no more of the pipeline than this.
 *
 * @example
 * ```ts
 * const bind = (pipeline: PipelineHandle): AnyTool => {
 *   const batch = pipeline.subBatch({ tools: ['read_file'], cancelRest: 'none', complete: 'when-settled' });
 *   return defineTool({ ...spec, execute: (args, ctx) => collect(callsOf(args).pipe(batch.stages(ctx.signal))) });
 * };
 * ```
 */
export interface PipelineHandle {
  /** The tools the pipeline's calls may use (its restrictions applied), pipeline-aware ones included. */
  readonly tools: readonly AnyTool[];
  /** The pipeline's `concurrency`: how many bodies its host lets run at once. */
  readonly concurrency: number;
  /** A batch of calls through the pipeline's stages, in a pool of its own: see {@link SubBatch}. */
  subBatch(options?: SubBatchOptions): SubBatch;
}

/**
 * How a sub-batch runs: which of the pipeline's tools its calls may use, its pool's bound, and the
 * pool's batch options (what a cancel-rest reaches, when the batch completes).
 *
 * @example
 * ```ts
 * const options: SubBatchOptions = { tools: ['read_file', 'list_files'], concurrency: 4, cancelRest: 'none', complete: 'when-settled' };
 * ```
 */
export interface SubBatchOptions extends Partial<BatchOptions> {
  /** The names of the tools its calls may use; a call of another is `unknown_tool`. @default every tool of the pipeline */
  readonly tools?: Iterable<string>;
  /** How many of its bodies may run at once. @default the pipeline's `concurrency` */
  readonly concurrency?: number;
}

/**
 * A batch of calls through a pipeline's stages — restrictions, validation, policies, guard, approver,
 * the execute and post-execute chains, the result chain — but not the reordering: each result comes out
 * as soon as it is built, so no `maxPending` bound applies (nothing waits to be reordered). Each
 * subscription of its stages is a batch of its own, in a pool of its own.
 *
 * @example
 * ```ts
 * calls$.pipe(batch.stages(ctx.signal)).subscribe(settle);
 * ```
 */
export interface SubBatch {
  /**
   * Its stages: aborting `signal` cancels every unfinished call (each still gets its result). `runner`,
   * a layer that runs the stages itself, adding what it adds (a durable turn's program journal), is
   * given what they run by and returns them.
   */
  stages(signal: AbortSignal, runner?: SubBatchRunner): OperatorFunction<ToolCall, ToolResult>;
}

/**
 * A layer that runs a sub-batch's stages itself (`runStages` with its own hooks, its own bound and
 * approver): given the engine's settings for the batch and the pool's options, it returns the stages.
 * The layer, not the tool that made the batch, sees the settings.
 *
 * @example
 * ```ts
 * batch.stages(signal, (settings, options, signal) => runStages(settings, signal, runHooks([journal]), options));
 * ```
 */
export type SubBatchRunner = (settings: PipelineSettings, options: BatchOptions, signal: AbortSignal) => OperatorFunction<ToolCall, ToolResult>;

/**
 * The handle of the pipeline whose settings are `settings`. It reads them when asked, not now: the
 * pipeline binds its pipeline-aware tools to this handle and puts the bound tools into the same settings.
 *
 * @example
 * ```ts
 * tools.set(name, tool[PIPELINE_HOOK](pipelineHandle(bound)));
 * ```
 */
export function pipelineHandle(settings: PipelineSettings): PipelineHandle {
  return Object.freeze({
    get tools(): readonly AnyTool[] {
      return availableTools(settings);
    },
    concurrency: settings.concurrency,
    subBatch: (options: SubBatchOptions = {}): SubBatch => subBatch(settings, options),
  });
}

function subBatch(pipeline: PipelineSettings, options: SubBatchOptions): SubBatch {
  const { tools, concurrency = pipeline.concurrency, cancelRest = DEFAULT_BATCH.cancelRest, complete = DEFAULT_BATCH.complete } = options;
  const names = tools === undefined ? undefined : new Set(tools);
  const pool: BatchOptions = Object.freeze({ cancelRest, complete });
  let settings: PipelineSettings | undefined;
  // At its first run, not now: a tool makes its batches while the pipeline still binds its tools.
  const resolved = (): PipelineSettings =>
    (settings ??= {
      ...pipeline,
      tools: names === undefined ? pipeline.tools : new Map([...pipeline.tools].filter(([name]) => names.has(name))),
      concurrency,
      maxPending: Infinity, // results in completion order: none waits to be reordered
    });
  return Object.freeze({
    stages: (signal: AbortSignal, runner?: SubBatchRunner) => (runner === undefined ? runStages(resolved(), signal, undefined, pool) : runner(resolved(), pool, signal)),
  });
}
