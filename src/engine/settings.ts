// The engine's settings: what the stages and the pool run by, resolved from the pipeline's options
// (`options.ts` validates them; this module only says their shape). Here, in the engine, so that the
// stages, the pool and the layers that run stages (durable turns, programs) import it from below
// instead of reaching up into the composition root.
import type { SchedulerLike } from 'rxjs';
import type { CallRecord } from './records/callRecord.js';
import type { RestrictionSet } from '../util/restrictionSet.js';
import type { Decision } from '../types/decision.js';
import type { EventObserver, ProgressLimits } from '../types/events.js';
import type { ExecuteMiddleware } from '../types/execute.js';
import type { PendingApproval } from '../types/pendingApproval.js';
import type { Approver, PostPolicy, PrePolicy } from '../types/policy.js';
import type { ResultMiddleware } from '../types/resultChain.js';
import type { RetentionBudget } from '../types/retention.js';
import type { AnyTool, OnError } from '../types/tool.js';
import type { ToolResult } from '../types/toolResult.js';

/** Options with defaults applied and tools indexed by name. */
export interface PipelineSettings {
  readonly tools: ReadonlyMap<string, AnyTool>;
  readonly concurrency: number;
  readonly maxPending: number;
  /** `undefined`: by the tool's mode. */
  readonly onError: OnError | undefined;
  /** `undefined` for no limit. */
  readonly defaultTimeoutMs: number | undefined;
  readonly abortGraceMs: number;
  readonly scheduler: SchedulerLike;
  readonly pre: readonly PrePolicy[];
  /** Policy names for traces: the function's name, else `pre[i]`. */
  readonly preNames: readonly string[];
  readonly defaultDecision: Decision;
  readonly approve: Approver | undefined;
  /** `undefined` for no limit. */
  readonly approvalTimeoutMs: number | undefined;
  /** `undefined` for no limit. */
  readonly policyTimeoutMs: number | undefined;
  readonly post: readonly PostPolicy[];
  readonly postNames: readonly string[];
  /** The pipeline's execute middleware (the tools' own are on the tools: `tool.chains`). */
  readonly execute: readonly ExecuteMiddleware[];
  readonly executeNames: readonly string[];
  readonly result: readonly ResultMiddleware[];
  readonly resultNames: readonly string[];
  readonly restrictions: RestrictionSet | undefined;
  /** The result observers (functions). */
  readonly observers: readonly ((result: ToolResult) => void)[];
  /** The event observers (objects with `event`); when there are any, every run goes through the events layer. */
  readonly eventObservers: readonly EventObserver[];
  readonly progress: ProgressLimits;
  readonly onObserverError: (error: unknown, result: ToolResult) => void;
  /** The budget of each tool that has one (default or its own). */
  readonly retention: ReadonlyMap<string, RetentionBudget>;
  /**
   * Internal, never set from options: in a durable batch, records a suspended call's pending approval
   * (its signed token, in the journal) and returns it. Absent elsewhere: suspending then fails closed.
   */
  readonly suspend?: (record: CallRecord) => PendingApproval | undefined;
}

/**
 * The tools a pipeline's calls may use: `tools` (by default all of them) with the restrictions applied.
 * Intake admits only these, `pipeline.available` offers them, and a program's `tools` holds them.
 */
export function availableTools(settings: PipelineSettings, tools: readonly AnyTool[] = [...settings.tools.values()]): readonly AnyTool[] {
  return settings.restrictions === undefined ? tools : settings.restrictions.filter(tools);
}
