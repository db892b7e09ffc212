import type { Attributes } from '@opentelemetry/api';
import type { ToolResult } from '../types/toolResult.js';

// The span attributes: the GenAI semantic conventions' for a tool execution (`execute_tool` spans,
// Development status as of semantic conventions 1.37+), and toolstream's own under `toolstream.*`.

export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const GEN_AI_TOOL_DESCRIPTION = 'gen_ai.tool.description';
export const GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
/** Opt-in in the conventions (it may hold sensitive data): recorded only with `recordArguments`. */
export const GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
/** Opt-in in the conventions (it may hold sensitive data): recorded only with `recordResults`. */
export const GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';
export const ERROR_TYPE = 'error.type';
export const EXECUTE_TOOL = 'execute_tool';

/**
 * What a call's span says once its result is built: toolstream's facts (status, decision, attempts,
 * each stage's duration), `error.type` (the error's code) when it did not succeed, and the result's
 * text (what the model sees) when asked.
 *
 * @example
 * ```ts
 * span.setAttributes(resultAttributes(result, false));
 * ```
 */
export function resultAttributes(result: ToolResult, recordResult: boolean): Attributes {
  const { durations } = result.timing;
  const attributes: Attributes = {
    'toolstream.status': result.status,
    'toolstream.started': result.started,
    'toolstream.attempts': result.attempts,
    'toolstream.duration.intake_ms': durations.intake,
    'toolstream.duration.policy_ms': durations.policy,
    'toolstream.duration.queue_ms': durations.queue,
    'toolstream.duration.execute_ms': durations.execute,
    'toolstream.duration.post_ms': durations.post,
  };
  if (result.decision !== undefined) attributes['toolstream.decision'] = result.decision;
  if (result.status === 'ok') {
    if (recordResult) attributes[GEN_AI_TOOL_CALL_RESULT] = result.content;
  } else {
    // A suspended call waits for a human's answer: not an error of the call, but its code says why it paused.
    attributes[result.status === 'suspended' ? 'toolstream.suspended' : ERROR_TYPE] = result.error.code;
  }
  return attributes;
}

/** `args` as JSON text for `gen_ai.tool.call.arguments` (the conventions allow a JSON string on spans); a note when it has none. */
export function argumentsText(args: unknown): string {
  try {
    return JSON.stringify(args) ?? 'null';
  } catch {
    return '[arguments without a JSON form]';
  }
}
