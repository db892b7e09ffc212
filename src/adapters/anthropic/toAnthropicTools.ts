import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import type { Pipeline } from '../../types/pipeline.js';
import type { AnyTool } from '../../types/tool.js';
import { toolSchemas } from '../../tool/toolSchemas.js';
import { ConfigError } from '../../util/errors.js';

/**
 * The tools to offer an Anthropic model, in the shape of the Messages API's `tools` parameter:
 * `{ name, description, input_schema }`, the schema being the JSON Schema of the tool's zod input (its
 * input form: what the model must send). Given a pipeline, these are its *available* tools — its
 * restrictions applied — so the model is never offered a tool the pipeline would refuse.
 *
 * Anthropic takes only object schemas (`input_schema.type` must be `"object"`): define each tool's
 * input with `z.object(...)`.
 *
 * @param source A pipeline (its available tools) or a list of tools (as given).
 * @returns Fresh `Tool` objects, in the tools' order (add `cache_control` and the like freely). The
 *   schemas inside are computed once per tool, shared and frozen.
 * @throws {ConfigError} when a tool's input schema is not an object schema; `option` names the tool
 *   (`tool "echo" input`) and the message its schema's type.
 *
 * @example
 * ```ts
 * const stream = client.messages.stream({
 *   model: 'claude-sonnet-4-5',
 *   max_tokens: 1024,
 *   tools: toAnthropicTools(pipeline), // [{ name: 'weather', description: '…', input_schema: { type: 'object', … } }]
 *   messages,
 * });
 * ```
 */
export function toAnthropicTools(source: Pipeline | readonly AnyTool[]): Tool[] {
  return toolSchemas(source).map(({ name, description, inputSchema }) => {
    if (inputSchema['type'] !== 'object') {
      // Its type is what is shown, not the schema: it says at once what is wrong.
      const type = inputSchema['type'];
      const given = type === undefined ? '(a schema without a type)' : `(a schema of type ${typeof type === 'string' ? type : JSON.stringify(type)})`;
      throw new ConfigError('toAnthropicTools', `tool "${name}" input`, 'a schema of type "object" (Anthropic takes only object schemas: define it with z.object(...))', given);
    }
    return { name, description, input_schema: inputSchema as Tool.InputSchema };
  });
}
