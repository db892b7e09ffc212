import type { ToolModelMessage, ToolResultPart } from 'ai';
import type { ToolResult } from '../../types/toolResult.js';
import { answerable } from '../answerable.js';

type ToolResultOutput = ToolResultPart['output'];

/**
 * Turns a batch of results into the AI SDK (v6) tool message to append after the assistant message
 * that holds the calls: `{ role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName,
 * output }, ...] }`, one part per result, in the order given (the pipeline's order: the model's).
 *
 * `output` carries `result.content`, the model-facing text toolstream rendered (after retention and
 * post-execute policies), so the model sees exactly what the pipeline decided it should:
 * - `ok` → `{ type: 'text', value: content }`;
 * - `error` and `cancelled` → `{ type: 'error-text', value: content }` (the message says what went
 *   wrong and how to correct it; providers mark it as an error, e.g. Anthropic's `is_error`);
 * - `denied` (a policy, a refused approval, a restriction) → `{ type: 'execution-denied', reason:
 *   content }`, the SDK's own form for a denied execution.
 *
 * Results of calls the stream cut off (`incomplete_args`: a `tool-input-start` never followed by its
 * `tool-call` part) are left out: the SDK records only complete `tool-call` parts in the assistant
 * message, and a result for a call the history does not hold would be rejected by the provider.
 *
 * An empty batch gives a message with no parts; the SDK drops empty tool messages from a prompt.
 *
 * @param results - The results of one model step, e.g. `await pipeline.run(fromAISDKStream(...))`.
 * @returns A `ToolModelMessage`, which is a `ModelMessage`: put it in the next call's `messages`.
 *
 * @example
 * ```ts
 * import { streamText, type ModelMessage } from 'ai';
 * import { fromAISDKStream, toAISDKToolMessage } from 'toolstream/ai-sdk';
 *
 * const messages: ModelMessage[] = [{ role: 'user', content: 'What is in README.md?' }];
 * const step = streamText({ model, tools, messages });
 * const results = await pipeline.run(fromAISDKStream(step.fullStream));
 * const { messages: response } = await step.response;
 * messages.push(...response.filter((m) => m.role === 'assistant'), toAISDKToolMessage(results));
 * const next = streamText({ model, tools, messages }); // the model reads the results
 * ```
 * @throws {DurableTurnError} `turn_suspended` when a result is `suspended` (a durable turn waiting
 *   for an approval has no answer for the model yet): resume the turn first.
 */
export function toAISDKToolMessage(results: readonly ToolResult[]): ToolModelMessage {
  return {
    role: 'tool',
    content: answerable(results).filter(isInHistory).map(
      (result): ToolResultPart => ({
        type: 'tool-result',
        toolCallId: result.id,
        toolName: result.name,
        output: outputOf(result),
      }),
    ),
  };
}

function isInHistory(result: ToolResult): boolean {
  return result.error?.code !== 'incomplete_args';
}

function outputOf(result: ToolResult): ToolResultOutput {
  switch (result.status) {
    case 'ok':
      return { type: 'text', value: result.content };
    case 'denied':
      return { type: 'execution-denied', reason: result.content };
    default:
      return { type: 'error-text', value: result.content };
  }
}
