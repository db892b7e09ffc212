import { toJSONSchema } from 'zod/v4/core';
import type { Pipeline } from '../types/pipeline.js';
import type { AnyTool } from '../types/tool.js';

/** A JSON Schema object, as providers take it. */
export type JsonSchema = Record<string, unknown>;

/**
 * A tool as a model is offered it: name, description, and its arguments as a JSON Schema (the zod
 * schema's input form, what the model must send).
 *
 * @example
 * ```ts
 * const [{ name, inputSchema }] = toolSchemas(pipeline);
 * ```
 */
export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

const cache = new WeakMap<AnyTool, ToolSchema>();

/**
 * The tools to offer a model, with JSON Schemas: a pipeline's available tools (its restrictions
 * applied, so the model is never offered a tool it may not call), or a list of tools as given.
 * Schemas are computed once per tool.
 *
 * @example
 * ```ts
 * toolSchemas(createPipeline({ tools: [readFile] })); // [{ name: 'read_file', description, inputSchema }]
 * ```
 */
export function toolSchemas(source: Pipeline | readonly AnyTool[]): ToolSchema[] {
  const tools = isPipeline(source) ? source.available : source;
  return tools.map((tool) => {
    let schema = cache.get(tool);
    if (schema === undefined) {
      const { $schema: _ignored, ...inputSchema } = toJSONSchema(tool.input, { io: 'input' }) as JsonSchema;
      // Frozen all the way down: every request shares these objects, so nobody may change them.
      schema = Object.freeze({ name: tool.name, description: tool.description, inputSchema: deepFreeze(inputSchema) });
      cache.set(tool, schema);
    }
    return schema;
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function isPipeline(source: Pipeline | readonly AnyTool[]): source is Pipeline {
  return !Array.isArray(source);
}
