// Building a pipeline
export { createPipeline, executeTools } from './pipeline/createPipeline.js';
export type { CallSource, Pipeline, ResumeOptions, RunOptions } from './types/pipeline.js';
export type { PipelineOptions } from './pipeline/options.js';

// Conversations: a run per turn
export { switchTurns } from './turns/switchTurns.js';
export { queueTurns } from './turns/queueTurns.js';
export type { SwitchTurnsOptions, TurnContext, TurnOptions, TurnProject } from './types/turns.js';
export type { RetentionBudget } from './types/retention.js';

// Defining tools
export { defineTool } from './tool/defineTool.js';
export type { AnyTool, OnError, Render, Tool, ToolChains, ToolContext, ToolDefinition, ToolFacts, ToolMode, ToolOutput } from './types/tool.js';
export { implementTool, isToolContract, toolContract } from './tool/toolContract.js';

// Scheduling (limits, rate limits)
export { createLimiter } from './tool/schedule/limiter.js';
export { createRateLimiter, resetRateLimits } from './tool/schedule/rateLimiter.js';
export type {
  Limiter,
  LimiterOptions,
  LimitOptions,
  RateLimiter,
  RateLimiterOptions,
  RateLimitOptions,
  ResolvedLimit,
  ResolvedRateLimit,
  ScheduleFacts,
  ToolStart,
} from './types/schedule.js';
export type { AttemptError, ResolvedRetry, RetryBackoff, RetryOptions } from './types/retry.js';
export type { ToolContract, ToolContractDefinition } from './tool/toolContract.js';
export type { FactsDefinition } from './tool/defineTool.js';

// Calls and results
export type { ToolCall } from './types/toolCall.js';
export { IncompleteArguments } from './util/incompleteArguments.js';
export type { ResultStatus, ToolResult, ToolResultFailed, ToolResultOk, ToolTiming } from './types/toolResult.js';
export type {
  ApprovalError,
  ArgsIssue,
  ApprovalPendingError,
  BehindSuspendedError,
  BlockedError,
  OutcomeUnknownError,
  CancelledError,
  DeniedError,
  InvalidRewriteError,
  PolicyError,
  RestrictedError,
  CancelReason,
  DuplicateIdError,
  IncompleteArgsError,
  InvalidArgsError,
  InvalidCallError,
  InvalidJsonError,
  InvalidOutputError,
  TimeoutError,
  ToolBodyError,
  ToolError,
  ToolErrorCode,
  UnknownToolError,
} from './types/toolError.js';

// Policies
export { MonotonicGuard, GuardRelaxedError, stricter } from './tool/policy/monotonicGuard.js';
export { allowTools, askTools, denyTools } from './tool/policy/toolPatterns.js';
export { DEFAULT_PATH_KEYS } from './tool/policy/pathArguments.js';
export type {
  ApprovalAnswer,
  ApprovalRequest,
  Approver,
  PostContext,
  PostDecision,
  PostPolicy,
  PreContext,
  PreDecision,
  PrePolicy,
  StartCheck,
  StartVerdict,
} from './types/policy.js';
export type { Decision, TraceEntry } from './types/decision.js';

// Execute and result middleware (with pre and post: the four chains)
export type { ExecuteContext, ExecuteMiddleware, ExecuteNext, ExecuteTool, Tightening } from './types/execute.js';
export { outcome } from './util/outcome.js';
export type { ExecuteOutcome, Outcomes, Streamed, SuspendedOutcome, UnknownOutcome } from './types/outcome.js';
export type { ResultDraft, ResultMiddleware } from './types/resultChain.js';
export type { AnswerInput, NextAnswer } from './types/answer.js';

// Durable turns
export { memoryJournal } from './durable/memoryJournal.js';
export { DurableTurnError } from './durable/errors.js';
export { suspendApprovals } from './tool/policy/suspendApprovals.js';
export type { ApprovalResponse, PendingApproval } from './types/pendingApproval.js';
export type { AsyncJournalStore, CallEntry, JournaledResult, JournalEntry, JournalStore, PruneOptions, TurnEnded, TurnLease } from './types/journal.js';

// Restriction and retention
export { RestrictionSet } from './util/restrictionSet.js';
export type { RestrictionLayer, RestrictionVerdict } from './util/restrictionSet.js';
export { ItemRetainer } from './util/itemRetainer.js';
export { retainText, TextRetainer } from './util/textRetainer.js';
export type { RetainedText, TextBudget } from './util/textRetainer.js';

// Offering tools to a model
export { toolSchemas } from './tool/toolSchemas.js';
export type { JsonSchema, ToolSchema } from './tool/toolSchemas.js';

// Programmatic tool calling (the QuickJS runtime is the subpath `toolstream/quickjs`)
export { runCodeTool, ProgramError } from './ptc/runCodeTool.js';
export type { ProgramOutput, RunCodeToolOptions } from './ptc/runCodeTool.js';
export type { SubCallsOmitted, SubDispatch } from './ptc/subCallLog.js';
export { describeTools } from './ptc/describeTools.js';
export type { DescribeToolsOptions } from './ptc/describeTools.js';
export type {
  CodeBinding,
  CodeFailure,
  CodeFailureKind,
  CodeRunRequest,
  CodeRunResult,
  CodeRuntime,
  HostFunction,
} from './ptc/types.js';

// Observability
export { otelSpans } from './observe/otelSpans.js';
export type { SpanTracer } from './observe/otelSpans.js';
export { renderTimeline } from './observe/timeline/renderTimeline.js';
export type { TimelineOptions } from './observe/timeline/renderTimeline.js';
export { terminalProgress } from './observe/progress/terminalProgress.js';
export type { ProgressOutput, TerminalProgress, TerminalProgressOptions } from './observe/progress/terminalProgress.js';
export type {
  EventObserver,
  PipelineApprovalAnsweredEvent,
  PipelineApprovalRequestedEvent,
  PipelineDecidedEvent,
  PipelineEvent,
  PipelineEventBase,
  PipelineFinishedEvent,
  PipelineProgressEvent,
  PipelineReceivedEvent,
  PipelineResultEvent,
  PipelineRetryEvent,
  PipelineStartedEvent,
  ToolObserver,
} from './types/events.js';
export type { JsonValue } from './types/json.js';

// Errors thrown by toolstream itself
export { ConfigError, SourceError } from './util/errors.js';
export { MissingPeerError } from './util/optionalPeer.js';
export type { ToolstreamError } from './util/errors.js';

// Stream building blocks
export { reorderByIndex } from './engine/stages/reorder.js';
