import { jsonSchema, type JSONSchema7, type Tool, type ToolSet } from 'ai';
import type { Pipeline } from '../../types/pipeline.js';
import type { AnyTool } from '../../types/tool.js';
import { toolSchemas } from '../../tool/toolSchemas.js';

/**
 * The tools to give `streamText`, **without `execute`**, so toolstream runs them and the AI SDK does
 * not: `{ [name]: { description, inputSchema } }`, each input schema the JSON Schema of the tool's zod
 * input wrapped with the SDK's `jsonSchema()` (no validation on the SDK's side: the pipeline validates
 * with the zod schema itself, applying defaults and transforms once). Given a pipeline, these are its
 * available tools, its restrictions applied.
 *
 * This is the one function of `toolstream/ai-sdk` that calls into `ai` at run time (`jsonSchema`).
 *
 * @param source A pipeline (its available tools) or a list of tools (as given).
 * @returns A fresh `ToolSet`.
 *
 * @example
 * ```ts
 * import { streamText } from 'ai';
 * import { toAISDKTools } from 'toolstream/ai-sdk';
 *
 * const result = streamText({ model, tools: toAISDKTools(pipeline), messages });
 * ```
 */
export function toAISDKTools(source: Pipeline | readonly AnyTool[]): ToolSet {
  // Own properties whatever the name (`Object.fromEntries` defines them: a tool named `__proto__` stays a tool).
  return Object.fromEntries(
    toolSchemas(source).map(({ name, description, inputSchema }): [string, Tool] => [
      name,
      { description, inputSchema: jsonSchema(inputSchema as JSONSchema7) },
    ]),
  );
}
