import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import type { Pipeline } from '../../createPipeline.js';
import type { AnyTool } from '../../defineTool.js';
import type { ToolResult } from '../../toolResult.js';
import { toolSchemas } from '../toolSchemas.js';

/**
 * The input items that answer a response's function calls in the Responses API: one
 * `{ type: 'function_call_output', call_id, output }` per result, in the order given. Every call has
 * a result — failed, denied and cancelled ones carry their explanation in `output` — so each
 * `call_id` is answered.
 *
 * Send them as the next request's `input` (with `previous_response_id`), or after the response's
 * output items when you keep the conversation yourself.
 *
 * @example
 * ```ts
 * const stream = client.responses.stream({ model: 'gpt-4.1', input, tools: toOpenAIResponsesTools(pipeline) });
 * const results = await pipeline.run(fromOpenAIResponsesStream(stream));
 * const next = client.responses.stream({
 *   model: 'gpt-4.1',
 *   previous_response_id: (await stream.finalResponse()).id,
 *   input: toOpenAIResponsesInput(results),
 *   tools: toOpenAIResponsesTools(pipeline),
 * });
 * ```
 */
export function toOpenAIResponsesInput(results: readonly ToolResult[]): ResponseInputItem.FunctionCallOutput[] {
  return results.map((result) => ({ type: 'function_call_output', call_id: result.id, output: result.content }));
}

/**
 * The `tools` of a Responses request: `{ type: 'function', name, description, parameters, strict:
 * false }` per tool, with the zod schema as JSON Schema (see `toolSchemas`). Given a pipeline, only
 * the tools its restrictions leave available are listed.
 *
 * `strict` is `false`: OpenAI's strict mode needs schemas of a restricted form (every property
 * required, `additionalProperties: false`) that an arbitrary zod schema does not have; the pipeline
 * validates the arguments itself.
 *
 * @example
 * ```ts
 * const stream = await client.responses.create({
 *   model: 'gpt-4.1',
 *   input: 'What is in README.md?',
 *   tools: toOpenAIResponsesTools(pipeline),
 *   stream: true,
 * });
 * ```
 */
export function toOpenAIResponsesTools(source: Pipeline | readonly AnyTool[]): FunctionTool[] {
  return toolSchemas(source).map(({ name, description, inputSchema }) => ({
    type: 'function',
    name,
    description,
    parameters: inputSchema,
    strict: false,
  }));
}
