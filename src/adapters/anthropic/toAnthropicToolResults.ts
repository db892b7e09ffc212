import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ToolResult } from '../../types/toolResult.js';
import { answerable } from '../answerable.js';

/**
 * The user message that answers an assistant turn's `tool_use` blocks: what
 * {@link toAnthropicToolResults} returns. It is an Anthropic `MessageParam` (a `UserMessageParam`)
 * whose content is known to be `tool_result` blocks.
 *
 * @example
 * ```ts
 * const message: AnthropicToolResultMessage = toAnthropicToolResults(results);
 * message.content[0]?.tool_use_id; // 'toolu_01…'
 * ```
 */
export interface AnthropicToolResultMessage {
  role: 'user';
  content: ToolResultBlockParam[];
}

/**
 * Turns a batch's results into the one user message Anthropic expects after an assistant turn with
 * tool calls: one `tool_result` block per result, in the order given (pass the pipeline's results as
 * they come: in model order), nothing else. Anthropic requires a `tool_result` for every `tool_use` of
 * the turn, all in that next user message and before any text; the pipeline gives every call exactly
 * one result, so passing all of a batch's results satisfies this. (Add your own text after these
 * blocks, never before.)
 *
 * Each block is `{ type: 'tool_result', tool_use_id: result.id, content: result.content, is_error }`,
 * where `is_error` is `true` for every result that is not `ok` (errors, denials, cancellations): their
 * `content` is the message written for the model, so it can correct itself. Do not send it for a
 * batch without results: Anthropic rejects a message without content (`runAnthropicTurn` adds it only
 * when there are calls).
 *
 * @param results The results of one batch, as `pipeline.run()` resolves them (or as the operator
 *   emitted them, collected).
 * @returns A fresh message: `{ role: 'user', content: [tool_result, …] }`, assignable to
 *   `Anthropic.MessageParam`.
 *
 * @example
 * ```ts
 * const results = await pipeline.run(fromAnthropicStream(stream));
 * messages.push({ role: 'assistant', content: (await stream.finalMessage()).content });
 * messages.push(toAnthropicToolResults(results));
 * // { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01…', content: '15 °C', is_error: false }] }
 * ```
 * @throws {DurableTurnError} `turn_suspended` when a result is `suspended` (a durable turn waiting
 *   for an approval has no answer for the model yet): resume the turn first.
 */
export function toAnthropicToolResults(results: readonly ToolResult[]): AnthropicToolResultMessage {
  return {
    role: 'user',
    content: answerable(results).map(
      (result): ToolResultBlockParam => ({
        type: 'tool_result',
        tool_use_id: result.id,
        content: result.content,
        is_error: result.status !== 'ok',
      }),
    ),
  };
}
