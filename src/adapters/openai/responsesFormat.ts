import type { CustomTool, FunctionTool, ResponseCustomToolCallOutput, ResponseInputItem } from 'openai/resources/responses/responses';
import type { Pipeline } from '../../types/pipeline.js';
import type { AnyTool } from '../../types/tool.js';
import { ConfigError } from '../../util/errors.js';
import type { ToolResult } from '../../types/toolResult.js';
import { toolSchemas } from '../../tool/toolSchemas.js';
import { customOption, type OpenAIResponsesOptions } from './customTools.js';
import { answerable } from '../answerable.js';

/**
 * The input items that answer a response's calls in the Responses API: one
 * `{ type: 'function_call_output', call_id, output }` per result, in the order given — or, for a
 * free-form tool declared in `options.custom`, `{ type: 'custom_tool_call_output', call_id, output }`.
 * Every call has a result — failed, denied and cancelled ones carry their explanation in `output` — so
 * each `call_id` is answered.
 *
 * Send them as the next request's `input` (with `previous_response_id`), or after the response's
 * output items when you keep the conversation yourself.
 *
 * `options` (second signature): the same `{ custom }` as given to {@link toOpenAIResponsesTools} and
 * `fromOpenAIResponsesStream`: the results of those tools become `custom_tool_call_output` items.
 *
 * @throws {ConfigError} when `options.custom` is not from `openAICustomTools`.
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
 *
 * @example
 * ```ts
 * // With free-form tools: the same declaration everywhere.
 * const custom = openAICustomTools([applyPatch]);
 * const results = await pipeline.run(fromOpenAIResponsesStream(stream, { custom }));
 * toOpenAIResponsesInput(results, { custom });
 * // [{ type: 'custom_tool_call_output', call_id: 'call_1', output: 'applied' }]
 * ```
 * @throws {DurableTurnError} `turn_suspended` when a result is `suspended` (a durable turn waiting
 *   for an approval has no answer for the model yet): resume the turn first.
 */
export function toOpenAIResponsesInput(results: readonly ToolResult[]): ResponseInputItem.FunctionCallOutput[];
export function toOpenAIResponsesInput(
  results: readonly ToolResult[],
  options: OpenAIResponsesOptions,
): (ResponseInputItem.FunctionCallOutput | ResponseCustomToolCallOutput)[];
export function toOpenAIResponsesInput(
  results: readonly ToolResult[],
  options?: OpenAIResponsesOptions,
): (ResponseInputItem.FunctionCallOutput | ResponseCustomToolCallOutput)[] {
  const custom = customOption('toOpenAIResponsesInput', options);
  return answerable(results).map((result) =>
    custom?.has(result.name) === true
      ? { type: 'custom_tool_call_output', call_id: result.id, output: result.content }
      : { type: 'function_call_output', call_id: result.id, output: result.content },
  );
}

/**
 * The `tools` of a Responses request: `{ type: 'function', name, description, parameters, strict:
 * false }` per tool, with the zod schema as JSON Schema (see `toolSchemas`) — or, for a free-form tool
 * declared in `options.custom`, `{ type: 'custom', name, description, format }` (the model then writes
 * plain text, constrained by the format's grammar if one was given). Given a pipeline, only the tools
 * its restrictions leave available are listed.
 *
 * `strict` is `false`: OpenAI's strict mode needs schemas of a restricted form (every property
 * required, `additionalProperties: false`) that an arbitrary zod schema does not have; the pipeline
 * validates the arguments itself.
 *
 * `options` (second signature): `{ custom }` from `openAICustomTools`, which tools are offered as free-form.
 *
 * @throws {ConfigError} when `options.custom` is not from `openAICustomTools`, or a tool it declares
 *   has, in `source`, an input that is not a string schema (a different tool under the same name).
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
 *
 * @example
 * ```ts
 * toOpenAIResponsesTools(pipeline, { custom: openAICustomTools([applyPatch]) });
 * // [{ type: 'custom', name: 'apply_patch', description: '…' }, { type: 'function', name: 'read_file', … }]
 * ```
 */
export function toOpenAIResponsesTools(source: Pipeline | readonly AnyTool[]): FunctionTool[];
export function toOpenAIResponsesTools(source: Pipeline | readonly AnyTool[], options: OpenAIResponsesOptions): (FunctionTool | CustomTool)[];
export function toOpenAIResponsesTools(source: Pipeline | readonly AnyTool[], options?: OpenAIResponsesOptions): (FunctionTool | CustomTool)[] {
  const custom = customOption('toOpenAIResponsesTools', options);
  return toolSchemas(source).map(({ name, description, inputSchema }): FunctionTool | CustomTool => {
    if (custom?.has(name) !== true) return { type: 'function', name, description, parameters: inputSchema, strict: false };
    if (inputSchema['type'] !== 'string') {
      throw new ConfigError('toOpenAIResponsesTools', `tool "${name}" input`, 'a string schema, as its free-form declaration needs', inputSchema);
    }
    const format = custom.format(name);
    return format === undefined ? { type: 'custom', name, description } : { type: 'custom', name, description, format };
  });
}
