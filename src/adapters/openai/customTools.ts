import type { CustomToolInputFormat } from 'openai/resources/shared';
import { ConfigError } from '../../util/errors.js';
import { isRecord } from '../../util/validate.js';
import type { AnyTool } from '../../types/tool.js';
import { toolSchemas } from '../../tool/toolSchemas.js';

/**
 * One free-form tool, as {@link openAICustomTools} takes it: the pipeline tool, and optionally the
 * grammar (Lark or a regular expression) that constrains the text the model writes.
 *
 * @example
 * ```ts
 * const spec: OpenAICustomToolSpec = { tool: runSql, format: { type: 'grammar', syntax: 'regex', definition: '^SELECT .+$' } };
 * ```
 */
export interface OpenAICustomToolSpec {
  /** The tool. Its input must be a string schema (`z.string()`, refinements allowed): the text reaches its body as is. */
  readonly tool: AnyTool;
  /** @default unconstrained text */
  readonly format?: CustomToolInputFormat;
}

/**
 * Which of a pipeline's tools the model calls with free-form text rather than JSON arguments (OpenAI
 * Responses "custom" tools): one declaration, built by {@link openAICustomTools}, that the three
 * Responses helpers share — pass it as `{ custom }` to each:
 * - {@link toOpenAIResponsesTools} offers these tools as `{ type: 'custom', name, description, format }`;
 * - {@link fromOpenAIResponsesStream} emits the `custom_tool_call`s of these names, with the raw text
 *   as the tool's (string) input, and ignores every other `custom_tool_call` (xAI reports its own
 *   server-side searches as `custom_tool_call` items: they are not the client's to run);
 * - {@link toOpenAIResponsesInput} answers their results with `custom_tool_call_output` items.
 *
 * Immutable. Only {@link openAICustomTools} makes one, after checking every tool (the type is branded:
 * an object of the same shape is not one).
 *
 * @example
 * ```ts
 * const custom = openAICustomTools([applyPatch]);
 * custom.has('apply_patch'); // true
 * ```
 */
export interface OpenAICustomTools {
  /** The names of the free-form tools, in the order given. */
  readonly names: readonly string[];
  /** Whether `name` is a declared free-form tool. */
  has(name: string): boolean;
  /** The input format declared for `name`, if any. */
  format(name: string): CustomToolInputFormat | undefined;
  readonly [brand]: true;
}

declare const brand: unique symbol;

/** What {@link openAICustomTools} makes; `instanceof` it is how the helpers check their `custom` option. */
class CustomToolsDeclaration implements OpenAICustomTools {
  declare readonly [brand]: true;
  readonly #formats: ReadonlyMap<string, CustomToolInputFormat | undefined>;

  constructor(formats: ReadonlyMap<string, CustomToolInputFormat | undefined>) {
    this.#formats = formats;
    Object.freeze(this);
  }

  get names(): readonly string[] {
    return [...this.#formats.keys()];
  }

  has(name: string): boolean {
    return this.#formats.has(name);
  }

  format(name: string): CustomToolInputFormat | undefined {
    return this.#formats.get(name);
  }
}

/**
 * Declares which pipeline tools the model calls with free-form text (OpenAI Responses custom tools):
 * the model writes plain text — a patch, a SQL query, a program — instead of JSON arguments, optionally
 * constrained by a grammar. Pass the result as `{ custom }` to {@link toOpenAIResponsesTools},
 * {@link fromOpenAIResponsesStream} and {@link toOpenAIResponsesInput} (see {@link OpenAICustomTools}).
 *
 * Each tool's input must be a string schema (`z.string()`, with refinements if you like): the call's
 * text reaches the body as that string, exactly as the model wrote it — it is never parsed as JSON —
 * and is validated by the schema like any input.
 *
 * @param tools The tools, each as itself (unconstrained text) or as `{ tool, format }`.
 * @throws {ConfigError} when an entry is not a tool or `{ tool, format }`, a tool's input is not a
 *   string schema, a format is malformed, or a name comes twice.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import { createPipeline, defineTool } from 'toolstream';
 * import { fromOpenAIResponsesStream, openAICustomTools, toOpenAIResponsesInput, toOpenAIResponsesTools } from 'toolstream/openai';
 *
 * const applyPatch = defineTool({
 *   name: 'apply_patch',
 *   description: 'Apply a unified diff to the working tree',
 *   input: z.string(),
 *   execute: (patch) => apply(patch),
 * });
 * const pipeline = createPipeline({ tools: [applyPatch, readFile] });
 * const custom = openAICustomTools([applyPatch]);
 *
 * const stream = client.responses.stream({ model: 'gpt-5', input, tools: toOpenAIResponsesTools(pipeline, { custom }) });
 * const results = await pipeline.run(fromOpenAIResponsesStream(stream, { custom }));
 * input.push(...(await stream.finalResponse()).output, ...toOpenAIResponsesInput(results, { custom }));
 * ```
 */
export function openAICustomTools(tools: readonly (AnyTool | OpenAICustomToolSpec)[]): OpenAICustomTools {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('openAICustomTools', option, expected, received);
  };
  if (!Array.isArray(tools)) fail('tools', 'an array of tools or { tool, format } entries', tools);
  const formats = new Map<string, CustomToolInputFormat | undefined>();
  tools.forEach((entry: unknown, i) => {
    const spec = isTool(entry) ? { tool: entry, format: undefined } : isRecord(entry) && isTool(entry['tool']) ? entry : undefined;
    if (spec === undefined) return fail(`tools[${i}]`, 'a tool (from defineTool) or { tool, format }', entry);
    const tool = spec['tool'] as AnyTool;
    const format = spec['format'];
    if (inputType(tool) !== 'string') {
      fail(`tools[${i}].tool.input`, `a string schema (z.string()) for the free-form tool "${tool.name}"`, tool.input);
    }
    if (format !== undefined && !isFormat(format)) {
      fail(`tools[${i}].format`, "{ type: 'text' } or { type: 'grammar', syntax: 'lark' | 'regex', definition: string }", format);
    }
    if (formats.has(tool.name)) fail(`tools[${i}]`, `a tool not declared before ("${tool.name}" is)`, tool.name);
    formats.set(tool.name, format === undefined ? undefined : (Object.freeze({ ...format }) as CustomToolInputFormat));
  });
  return new CustomToolsDeclaration(formats);
}

/** The JSON Schema type of the tool's input as the model sends it (`undefined` when it has no JSON Schema). */
function inputType(tool: AnyTool): unknown {
  try {
    return toolSchemas([tool])[0]?.inputSchema['type'];
  } catch {
    return undefined;
  }
}

function isTool(value: unknown): value is AnyTool {
  return isRecord(value) && typeof value['name'] === 'string' && typeof value['execute'] === 'function' && isRecord(value['input']);
}

function isFormat(value: unknown): value is CustomToolInputFormat {
  if (!isRecord(value)) return false;
  if (value['type'] === 'text') return true;
  return value['type'] === 'grammar' && (value['syntax'] === 'lark' || value['syntax'] === 'regex') && typeof value['definition'] === 'string';
}

/**
 * Options of the Responses helpers ({@link toOpenAIResponsesTools}, {@link fromOpenAIResponsesStream},
 * {@link toOpenAIResponsesInput}): give all three the same.
 *
 * @example
 * ```ts
 * const options: OpenAIResponsesOptions = { custom: openAICustomTools([applyPatch]) };
 * const tools = toOpenAIResponsesTools(pipeline, options);
 * ```
 */
export interface OpenAIResponsesOptions {
  /**
   * The tools the model calls with free-form text (from {@link openAICustomTools}).
   * @default none: every tool is offered as a function, and every `custom_tool_call` is ignored
   */
  readonly custom?: OpenAICustomTools;
}

/** The `custom` option, checked eagerly. */
export function customOption(
  where: 'toOpenAIResponsesTools' | 'fromOpenAIResponsesStream' | 'toOpenAIResponsesInput' | 'runOpenAIResponsesTurn' | 'continueOpenAIResponsesTurn' | 'runOpenAIResponsesLoop',
  options: unknown,
): OpenAICustomTools | undefined {
  if (options === undefined) return undefined;
  if (!isRecord(options)) throw new ConfigError(where, 'options', 'an object', options);
  const { custom } = options;
  if (custom === undefined || custom instanceof CustomToolsDeclaration) return custom;
  throw new ConfigError(where, 'options.custom', 'the result of openAICustomTools(...)', custom);
}
