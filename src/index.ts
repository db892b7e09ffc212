// Building a pipeline
export { createPipeline, executeTools } from './createPipeline.js';
export type { CallSource, Pipeline, RunOptions } from './createPipeline.js';
export type { PipelineOptions } from './options.js';

// Defining tools
export { defineTool } from './defineTool.js';
export type { AnyTool, OnError, Tool, ToolContext, ToolDefinition, ToolMode, ToolOutput } from './defineTool.js';

// Calls and results
export type { ToolCall } from './toolCall.js';
export type { ResultStatus, ToolResult, ToolResultFailed, ToolResultOk, ToolTiming } from './toolResult.js';
export type {
  ArgsIssue,
  CancelledError,
  CancelReason,
  DuplicateIdError,
  InvalidArgsError,
  InvalidCallError,
  InvalidJsonError,
  InvalidOutputError,
  TimeoutError,
  ToolBodyError,
  ToolError,
  ToolErrorCode,
  UnknownToolError,
} from './toolError.js';

// Errors thrown by toolstream itself
export { ConfigError, SourceError } from './errors.js';
export type { ToolstreamError } from './errors.js';

// Stream building blocks
export { reorderByIndex } from './stages/reorder.js';
