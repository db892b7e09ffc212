import type { ChatCompletionFunctionTool, ChatCompletionToolMessageParam } from 'openai/resources/chat/completions';
import type { Pipeline } from '../../types/pipeline.js';
import type { AnyTool } from '../../types/tool.js';
import type { ToolResult } from '../../types/toolResult.js';
import { toolSchemas } from '../../tool/toolSchemas.js';
import { answerable } from '../answerable.js';

/**
 * The `tool` messages that answer an assistant message's tool calls in the Chat Completions API: one
 * `{ role: 'tool', tool_call_id, content }` per result, in the order given (the pipeline's results are
 * already in the model's order). Every call has a result — failed, denied and cancelled ones carry
 * their explanation in `content` — so each `tool_call_id` gets the message OpenAI requires.
 *
 * Append them after the assistant message that holds the calls.
 *
 * @example
 * ```ts
 * const stream = client.chat.completions.stream({ model: 'gpt-4o', messages, tools: toOpenAIChatTools(pipeline) });
 * const results = await pipeline.run(fromOpenAIChatStream(stream));
 * messages.push(await stream.finalMessage(), ...toOpenAIChatToolMessages(results));
 * ```
 * @throws {DurableTurnError} `turn_suspended` when a result is `suspended` (a durable turn waiting
 *   for an approval has no answer for the model yet): resume the turn first.
 */
export function toOpenAIChatToolMessages(results: readonly ToolResult[]): ChatCompletionToolMessageParam[] {
  return answerable(results).map((result) => ({ role: 'tool', tool_call_id: result.id, content: result.content }));
}

/**
 * The `tools` of a Chat Completions request: `{ type: 'function', function: { name, description,
 * parameters } }` per tool, with the zod schema as JSON Schema (see `toolSchemas`). Given a pipeline,
 * only the tools its restrictions leave available are listed, so the model is never offered a tool it
 * may not call.
 *
 * The type is the function member of the SDK's `ChatCompletionTool` union, so the list fits `tools`
 * of `ChatCompletionCreateParams` as is.
 *
 * @example
 * ```ts
 * const stream = await client.chat.completions.create({
 *   model: 'gpt-4o',
 *   messages,
 *   tools: toOpenAIChatTools(pipeline),
 *   stream: true,
 * });
 * ```
 */
export function toOpenAIChatTools(source: Pipeline | readonly AnyTool[]): ChatCompletionFunctionTool[] {
  return toolSchemas(source).map(({ name, description, inputSchema }) => ({
    type: 'function',
    function: { name, description, parameters: inputSchema },
  }));
}
