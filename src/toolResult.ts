// The types live in types/, the leaf room; this path re-exports them for its importers.
export type { ResultStatus, ToolResult, ToolResultFailed, ToolResultOk, ToolTiming } from './types/toolResult.js';
