// The engine's settings: what the stages and the pool run by, resolved from the pipeline's options
// (`options.ts` validates them; this module only says their shape). Here, in the engine, so that the
// stages, the pool and the layers that run stages (durable turns, programs) import it from below
// instead of reaching up into the composition root.
//
// Each stage takes only its slice (`IntakeSettings`, `PreSettings`, `GuardSettings`, `PoolSettings`,
// `PostSettings`, `ResultChainSettings`, `ResultSettings`), so what a stage depends on is in its
// signature; `StageSettings` is all of them (what `runStages` reads), `PipelineSettings` adds the
// reorder's bound (`runInOrder`).
import type { SchedulerLike } from 'rxjs';
import type { RestrictionSet } from '../util/restrictionSet.js';
import type { Decision } from '../types/decision.js';
import type { ExecuteMiddleware } from '../types/execute.js';
import type { Approver, PostPolicy, PrePolicy } from '../types/policy.js';
import type { ResultMiddleware } from '../types/resultChain.js';
import type { RetentionBudget } from '../types/retention.js';
import type { AnyTool, OnError } from '../types/tool.js';
import type { ToolResult } from '../types/toolResult.js';

/** The tools a pipeline's calls may use: read by intake, by the result chain (tools' own chains), and by `availableTools`. */
export interface ToolSettings {
  readonly tools: ReadonlyMap<string, AnyTool>;
  readonly restrictions: RestrictionSet | undefined;
}

/**
 * Whether any call needs deciding (see `allowsEveryCall`): with no pre policy and `defaultDecision:
 * 'allow'` intake decides every call itself, and the pre-execute and guard stages are the identity.
 */
export interface DecisionSettings {
  readonly pre: readonly PrePolicy[];
  readonly defaultDecision: Decision;
}

/** The clock and time limit of a policy chain (pre, post, result) and of start checks. */
export interface ChainClock {
  readonly scheduler: SchedulerLike;
  /** `undefined` for no limit. */
  readonly policyTimeoutMs: number | undefined;
}

/**
 * What the intake stage reads: the tools, the restrictions, whether policies will decide, and the
 * clock each call's record keeps (`CallRecord.clock`), which every later stage reads its times from.
 */
export interface IntakeSettings extends ToolSettings, DecisionSettings {
  /**
   * The pipeline's clock, in milliseconds (`clockOf(scheduler)`): `performance.now()` in real time, the
   * scheduler's `now()` on a virtual one, so that every `timing` figure is a frame of a `TestScheduler`.
   */
  readonly clock: () => number;
}

/** What the pre-execute stage reads. */
export interface PreSettings extends DecisionSettings, ChainClock {
  /** Policy names for traces: the function's name, else `pre[i]`. */
  readonly preNames: readonly string[];
}

/** What the guard stage reads. */
export interface GuardSettings extends DecisionSettings {
  readonly scheduler: SchedulerLike;
  readonly approve: Approver | undefined;
  /** `undefined` for no limit. */
  readonly approvalTimeoutMs: number | undefined;
}

/** What the pool's admission reads (`Admission`): a limit's permit is kept for the grace after an abort. */
export interface AdmissionSettings {
  readonly scheduler: SchedulerLike;
  readonly abortGraceMs: number;
}

/** What the attempts read (`Attempts`): start checks, each attempt's time limit and chain, the grace, retries. */
export interface AttemptSettings extends AdmissionSettings, ChainClock {
  /** `undefined` for no limit. */
  readonly defaultTimeoutMs: number | undefined;
  /** The budget of each tool that has one (default or its own); attempts count a streamed body's items by it. */
  readonly retention: ReadonlyMap<string, RetentionBudget>;
  /** The pipeline's execute middleware (the tools' own are on the tools: `tool.chains`). */
  readonly execute: readonly ExecuteMiddleware[];
  readonly executeNames: readonly string[];
}

/** What the execute stage's pool reads (`CallPool`), its admission and its attempts included. */
export interface PoolSettings extends AttemptSettings {
  readonly concurrency: number;
  /** `undefined`: by the tool's mode. */
  readonly onError: OnError | undefined;
}

/** What the post-execute stage reads. */
export interface PostSettings extends ChainClock {
  readonly post: readonly PostPolicy[];
  readonly postNames: readonly string[];
  readonly retention: ReadonlyMap<string, RetentionBudget>;
}

/** What the result chain reads (the tools for their own `chains.result`). */
export interface ResultChainSettings extends ChainClock {
  readonly result: readonly ResultMiddleware[];
  readonly resultNames: readonly string[];
  readonly tools: ReadonlyMap<string, AnyTool>;
}

/** What the result stage reads (`toResults`): the result observers, called as each result is built. */
export interface ResultSettings {
  /** The result observers (functions). */
  readonly observers: readonly ((result: ToolResult) => void)[];
  readonly onObserverError: (error: unknown, result: ToolResult) => void;
}

/** Every stage's slice: what `runStages` reads, and hands on to each stage. */
export interface StageSettings extends IntakeSettings, PreSettings, GuardSettings, PoolSettings, PostSettings, ResultChainSettings, ResultSettings {}

/**
 * Options with defaults applied and tools indexed by name: every stage's slice, and the reorder's bound.
 * The layers' own options are theirs (the events layer's: `EventSettings`, in `observe/`).
 */
export interface PipelineSettings extends StageSettings {
  /** How many results may wait to be reordered (`runInOrder`'s window). */
  readonly maxPending: number;
}

/**
 * The tools a pipeline's calls may use: `tools` (by default all of them) with the restrictions applied.
 * Intake admits only these, `pipeline.available` offers them, and a program's `tools` holds them.
 */
export function availableTools(settings: ToolSettings, tools: readonly AnyTool[] = [...settings.tools.values()]): readonly AnyTool[] {
  return settings.restrictions === undefined ? tools : settings.restrictions.filter(tools);
}
