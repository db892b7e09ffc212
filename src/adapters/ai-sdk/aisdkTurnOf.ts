import type { AssistantModelMessage, ModelMessage } from 'ai';
import type { JsonValue } from '../../types/json.js';
import type { Pipeline } from '../../types/pipeline.js';
import type { ToolResult } from '../../types/toolResult.js';
import { durableFields, type ContinuationOptions, type Settlement } from '../loop/index.js';
import { toAISDKApprovalRequests } from './aisdkApprovals.js';
import type { AISDKTurn } from './aisdkTurn.js';
import { toAISDKToolMessage } from './toAISDKToolMessage.js';

/** What {@link aisdkTurnOf} needs beside the settlement: the step as the SDK assembled it, and where it runs. */
export interface AISDKStepFacts extends ContinuationOptions {
  /** The step's assistant messages (each tool call once); empty when the step is not known (a lease refused before it ran). */
  readonly assistant: readonly AssistantModelMessage[];
  readonly text: string;
  readonly turn: string | undefined;
  readonly step: number;
}

/**
 * The AI SDK turn of a settled step (`settleRun`): its outcome, its messages, its continuation.
 *
 * - answered: the assistant message, then one tool message with every result in the model's order
 *   (none when the model called no tool: `'done'`);
 * - suspended: the assistant message with a `tool-approval-request` part per pending approval after
 *   its calls — where `streamText` puts them for a tool with `needsApproval` — then a tool message with
 *   the results the calls that ran have (none for the suspended ones): the step stays in the history, as
 *   the SDK's own approval flow keeps it, and the answers come back as `tool-approval-response` parts;
 * - `lease_lost`: the assistant message (the turn's new driver answers its calls); `turn_leased`: none.
 *
 * The continuation's `state` is the step's tool call ids: a continuation goes on only with a history
 * whose last assistant message holds those calls.
 */
export function aisdkTurnOf(pipeline: Pipeline, settled: Settlement, facts: AISDKStepFacts): AISDKTurn {
  const { assistant, text, turn, step } = facts;
  const results = settled.results;
  const answer = toAISDKToolMessage(results.filter((result) => result.status !== 'suspended'));
  const toolMessage = settled.kind === 'answered' || settled.kind === 'suspended' ? (answer.content.length > 0 ? answer : undefined) : undefined;
  const done = settled.kind === 'answered' && toolMessage === undefined;
  const state: JsonValue = { toolCallIds: callIdsOf(assistant) };
  const fields = durableFields(pipeline, settled, {
    provider: 'ai-sdk',
    turn,
    step,
    state: settled.kind === 'turn_leased' && assistant.length === 0 ? undefined : state,
    done,
    ...(facts.secret === undefined ? {} : { secret: facts.secret }),
  });
  const stepMessages: ModelMessage[] = settled.kind === 'suspended' ? withApprovalRequests(assistant, results) : [...assistant];
  return {
    ...fields,
    results,
    toolMessage,
    messages: toolMessage === undefined ? stepMessages : [...stepMessages, toolMessage],
    text,
    done,
  };
}

/** The ids of the tool calls in these assistant messages, in order. */
export function callIdsOf(messages: readonly ModelMessage[]): string[] {
  return messages.flatMap((message) =>
    message.role !== 'assistant' || typeof message.content === 'string' ? [] : message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])),
  );
}

/** The assistant messages with the approval requests after the calls, in the last message holding tool calls. */
function withApprovalRequests(messages: readonly AssistantModelMessage[], results: readonly ToolResult[]): AssistantModelMessage[] {
  const requests = toAISDKApprovalRequests(results);
  const at = messages.findLastIndex((message) => typeof message.content !== 'string' && message.content.some((part) => part.type === 'tool-call'));
  if (requests.length === 0 || at < 0) return [...messages];
  return messages.map((message, i) => (i === at && typeof message.content !== 'string' ? { ...message, content: [...message.content, ...requests] } : message));
}
