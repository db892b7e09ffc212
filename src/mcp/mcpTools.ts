import { ConfigError } from '../util/errors.js';
import { defineTool } from '../tool/defineTool.js';
import { describeError } from '../util/describe.js';
import { isCount, isPositiveDuration } from '../util/validate.js';
import type { AnyTool, ToolMode } from '../types/tool.js';
import { callTool, renderForModel } from './callTool.js';
import { compileInputSchema, DEFAULT_ARGS_LIMITS, type ArgsLimits } from './inputSchema.js';
import { listAllTools } from './listing.js';
import { compileOutputSchema, DEFAULT_OUTPUT_LIMITS, type CompiledOutput } from './outputSchema.js';
import type { McpClient, McpSkipReason, McpTool, McpToolsOptions } from './types.js';

const NAME_PATTERN = /^[A-Za-z0-9_.:-]*$/;
const UNSAFE_NAME_CHARS = /[^A-Za-z0-9_.:-]/gu;
const MAX_NAME_LENGTH = 128;
const NO_NAMES: ReadonlyMap<string, string> = new Map();
/** Deeper checks would recurse further than zod's validators comfortably do. */
const MAX_DEPTH = 1000;

const listed = new WeakMap<AnyTool, McpTool>();

/**
 * Turns the tools of a connected MCP server into pipeline tools.
 *
 * Lists every tool (following `nextCursor` pagination) and defines one pipeline tool for each:
 * - **name** — `prefix` + the server's name, or + the name `names` maps it to. A server name with a
 *   character outside toolstream's name rule (letters, digits, `_ - . :`) is refused (an `onNotice`
 *   `skipped`, `unsafe_name`) unless `names` maps it: rewriting it silently would let `dеlete_repo`
 *   (Cyrillic `е`) reach the model under a name no deny pattern was written for. A name that is empty
 *   or too long (over 128 characters with the prefix), or that an earlier tool already took, is
 *   skipped too. The server is always called by its own name.
 * - **input** — the tool's `inputSchema`, checked before the call: arguments that fail it give an
 *   `invalid_args` result whose message names each path, and the server never sees the call. The
 *   arguments are forwarded exactly as the model sent them (JSON Schema validates, it does not fill in
 *   defaults). `toolSchemas()` offers the server's schema as listed. Keywords that cannot be checked
 *   are skipped, never guessed (an `onNotice` `relaxed`); a schema that cannot be compiled skips the
 *   tool (`invalid_schema`). Checking never blocks the event loop for more than a few milliseconds:
 *   only patterns that provably test in linear time are checked, compositions whose work would
 *   multiply are relaxed, and arguments beyond `maxArgsLength`, `maxArgsValues` or `maxArgsDepth`
 *   (lowered for a schema that costs more per value) get `invalid_args`.
 * - **mode** — `options.mode` first; then, with `trustAnnotations`, `readOnlyHint: true` →
 *   `'parallel'`; else `'exclusive'`. Annotations are untrusted by default.
 * - **output** — with `output: 'structured'` (the default), the tool's `outputSchema` is compiled
 *   with the same vetting as its input schema, and each result's `structuredContent` is checked
 *   against it within `maxOutputLength`, `maxOutputValues` and `maxOutputDepth`: a result that lacks
 *   it, fails it, or is beyond a limit throws an {@link McpOutputError} → `tool_error`. Parts that
 *   cannot be checked in bounded time are left unchecked (an `onNotice` `relaxed`, `schema: 'outputSchema'`);
 *   a malformed output schema skips the tool (`invalid_output_schema`), never the whole server.
 * - **execute** — a `tools/call` request with the call's signal: a timeout, cancel-rest, the run's
 *   abort or an unsubscribe cancels the MCP request (the server is sent `notifications/cancelled` and
 *   its handler's signal aborts). The model reads the text of the server's content blocks; the
 *   result's `value` is the `structuredContent` (see `output`). `isError: true` throws an
 *   {@link McpToolError} → `tool_error`; a protocol error (unknown tool, closed connection, the SDK's
 *   request timeout) rejects → `tool_error`.
 * - **description** — the server's description, else its title, else its name (the first that is not empty).
 *
 * Listing and calls go through the client's `request`, never its `listTools` and `callTool`: those
 * compile each output schema with ajv and check every structured result with it on the event loop,
 * where one pattern such as `^(a+)+$` blocks the process for seconds (and one schema ajv cannot
 * compile rejects the whole listing). The SDK's validators stay out of it even when your own code
 * calls `client.listTools()` on the same client; those calls of yours still compile with ajv.
 *
 * Tools that only run as MCP tasks (`taskSupport: 'required'`) are skipped. The list is a snapshot:
 * call `mcpTools` again when the server's tools change (`notifications/tools/list_changed`).
 * {@link mcpToolOf} gives back the listed tool (annotations included) for policies.
 *
 * @param client - a connected client (`@modelcontextprotocol/sdk`); this function never connects or closes it.
 * @throws {ConfigError} (as a rejection) for invalid options (a TypeError), or a mode that is not `'parallel'` or `'exclusive'`.
 * @throws the listing's error (as a rejection) when `tools/list` fails or paginates without end.
 *
 * @example
 * ```ts
 * import { Client } from '@modelcontextprotocol/sdk/client/index.js';
 * import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
 * import { createPipeline } from 'toolstream';
 * import { mcpTools } from 'toolstream/mcp';
 *
 * const client = new Client({ name: 'my-agent', version: '1.0.0' });
 * await client.connect(new StdioClientTransport({ command: 'github-mcp-server', args: ['stdio'] }));
 *
 * const tools = await mcpTools(client, { prefix: 'mcp__github__', timeoutMs: 30_000 });
 * const pipeline = createPipeline({ tools });
 * const [result] = await pipeline.run([
 *   { id: 'call_1', name: 'mcp__github__get_issue', args: { owner: 'octo', repo: 'demo', issue_number: 1 } },
 * ]);
 * console.log(result?.status, result?.content);
 * await client.close();
 * ```
 */
export async function mcpTools(client: McpClient, options: McpToolsOptions = {}): Promise<AnyTool[]> {
  const settings = checkOptions(options);
  const notify = options.onNotice ?? (() => {});
  const tools: AnyTool[] = [];
  const taken = new Set<string>();

  for (const { tool: listedTool, badOutputSchema } of await listAllTools(client, options.signal)) {
    const mcpName = listedTool.name;
    const skip = (reason: McpSkipReason, why: string): void =>
      notify({ kind: 'skipped', reason, tool: listedTool, message: `MCP tool ${JSON.stringify(mcpName)} skipped: ${why}` });

    const local = settings.names.get(mcpName) ?? mcpName;
    const name = settings.prefix + local;
    const unsafe = local.match(UNSAFE_NAME_CHARS);
    if (unsafe !== null) {
      const chars = [...new Set(unsafe)].map(describeChar).join(', ');
      skip('unsafe_name', `its name has characters a tool name may not have (${chars}); map it to a name in the \`names\` option to offer it`);
      continue;
    }
    if (local === '' || name.length > MAX_NAME_LENGTH) {
      skip('invalid_name', `its name${settings.prefix === '' ? '' : ' with the prefix'} must be 1-${MAX_NAME_LENGTH} characters`);
      continue;
    }
    if (taken.has(name)) {
      skip('duplicate_name', `an earlier tool of this server is already named "${name}"`);
      continue;
    }
    if (listedTool.execution?.taskSupport === 'required') {
      skip('task_required', 'it only runs as an MCP task');
      continue;
    }
    let input: ReturnType<typeof compileInputSchema>;
    try {
      input = compileInputSchema(listedTool.inputSchema, settings.limits);
    } catch (error) {
      skip('invalid_schema', `its input schema cannot be checked (${describeError(error)})`);
      continue;
    }
    // With `output: 'text'` the structured content is never used: its schema is not even compiled.
    let output: CompiledOutput | undefined;
    if (settings.output === 'structured') {
      const compiled = compileOutput(listedTool.outputSchema, badOutputSchema, settings.outputLimits);
      if (typeof compiled === 'string') {
        skip('invalid_output_schema', `its output schema cannot be checked (${compiled})`);
        continue;
      }
      output = compiled;
    }

    const mode = resolveMode(listedTool, options.mode, settings.trustAnnotations);
    const call = { requestTimeoutMs: settings.requestTimeoutMs, output: settings.output, outputSchema: output };
    const tool = defineTool({
      name,
      description: firstText(listedTool.description, listedTool.title, listedTool.annotations?.title) ?? mcpName,
      input: input.schema,
      mode,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      ...(options.onError !== undefined && { onError: options.onError }),
      execute: (args, ctx) => callTool(client, mcpName, args as Record<string, unknown>, ctx, call),
      render: renderForModel,
    });
    taken.add(name);
    listed.set(tool, listedTool);
    tools.push(tool);

    const relaxed = (schema: 'inputSchema' | 'outputSchema', keywords: readonly string[], what: string): void => {
      if (keywords.length === 0) return;
      const message = `MCP tool ${JSON.stringify(mcpName)}: ${keywords.join(', ')} of its ${what}`;
      notify({ kind: 'relaxed', name, schema, keywords, tool: listedTool, message });
    };
    relaxed('inputSchema', input.relaxed, 'input schema are left to the server to check');
    relaxed('outputSchema', output?.relaxed ?? [], 'output schema are not checked on its results');
  }
  return tools;
}

/**
 * The MCP tool a pipeline tool was made from, as the server listed it (name, annotations, schemas),
 * or `undefined` for any other tool. Lets policies look at annotations; they are hints from the
 * server, so use them to tighten, not to relax.
 *
 * @example
 * ```ts
 * const askUnlessReadOnly: PrePolicy = async (ctx, next) => {
 *   const verdict = await next();
 *   const listed = mcpToolOf(ctx.tool);
 *   if (listed === undefined || listed.annotations?.readOnlyHint === true) return undefined;
 *   return verdict.decision === 'allow' ? { decision: 'ask', reason: 'writes through MCP' } : undefined;
 * };
 * ```
 */
export function mcpToolOf(tool: AnyTool): McpTool | undefined {
  return listed.get(tool);
}

interface Settings {
  readonly prefix: string;
  /** The caller's `names`: server name → name after the prefix. */
  readonly names: ReadonlyMap<string, string>;
  readonly trustAnnotations: boolean;
  readonly requestTimeoutMs: number | undefined;
  readonly output: 'structured' | 'text';
  readonly limits: ArgsLimits;
  /** `maxOutputLength`, `maxOutputValues` and `maxOutputDepth`, in the shape the vetting takes. */
  readonly outputLimits: ArgsLimits;
}

function checkOptions(options: McpToolsOptions): Settings {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('mcpTools', option, expected, received);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  const {
    prefix = '',
    names,
    trustAnnotations = false,
    mode,
    timeoutMs,
    requestTimeoutMs,
    onError,
    output = 'structured',
    maxArgsLength = DEFAULT_ARGS_LIMITS.maxArgsLength,
    maxArgsValues = DEFAULT_ARGS_LIMITS.maxArgsValues,
    maxArgsDepth = DEFAULT_ARGS_LIMITS.maxArgsDepth,
    maxOutputLength = DEFAULT_OUTPUT_LIMITS.maxArgsLength,
    maxOutputValues = DEFAULT_OUTPUT_LIMITS.maxArgsValues,
    maxOutputDepth = DEFAULT_OUTPUT_LIMITS.maxArgsDepth,
    signal,
    onNotice,
  } = options;
  if (typeof prefix !== 'string' || !NAME_PATTERN.test(prefix) || prefix.length >= MAX_NAME_LENGTH) {
    fail('prefix', `fewer than ${MAX_NAME_LENGTH} letters, digits, "_", "-", "." or ":"`, prefix);
  }
  if (typeof trustAnnotations !== 'boolean') fail('trustAnnotations', 'a boolean', trustAnnotations);
  if (mode !== undefined && !isMode(mode) && typeof mode !== 'function' && (typeof mode !== 'object' || mode === null)) {
    fail('mode', '"parallel", "exclusive", a map of tool names to modes, or a function', mode);
  }
  if (timeoutMs !== undefined && !isPositiveDuration(timeoutMs)) fail('timeoutMs', 'a positive number of milliseconds', timeoutMs);
  if (requestTimeoutMs !== undefined && !isPositiveDuration(requestTimeoutMs)) {
    fail('requestTimeoutMs', 'a positive number of milliseconds', requestTimeoutMs);
  }
  if (onError !== undefined && onError !== 'cancel-rest' && onError !== 'continue') fail('onError', '"cancel-rest" or "continue"', onError);
  if (output !== 'structured' && output !== 'text') fail('output', '"structured" or "text"', output);
  if (!isCount(maxArgsLength, 1)) fail('maxArgsLength', 'a positive integer, or Infinity', maxArgsLength);
  if (!isCount(maxArgsValues, 1)) fail('maxArgsValues', 'a positive integer, or Infinity', maxArgsValues);
  if (!isCount(maxArgsDepth, 1) || maxArgsDepth > MAX_DEPTH) fail('maxArgsDepth', `an integer from 1 to ${MAX_DEPTH}`, maxArgsDepth);
  if (!isCount(maxOutputLength, 1)) fail('maxOutputLength', 'a positive integer, or Infinity', maxOutputLength);
  if (!isCount(maxOutputValues, 1)) fail('maxOutputValues', 'a positive integer, or Infinity', maxOutputValues);
  if (!isCount(maxOutputDepth, 1) || maxOutputDepth > MAX_DEPTH) fail('maxOutputDepth', `an integer from 1 to ${MAX_DEPTH}`, maxOutputDepth);
  if (signal !== undefined && !(signal instanceof AbortSignal)) fail('signal', 'an AbortSignal', signal);
  if (onNotice !== undefined && typeof onNotice !== 'function') fail('onNotice', 'a function', onNotice);
  return {
    prefix,
    names: checkNames(names, prefix, fail),
    trustAnnotations,
    requestTimeoutMs: requestTimeoutMs ?? timeoutMs,
    output,
    limits: { maxArgsLength, maxArgsValues, maxArgsDepth },
    outputLimits: { maxArgsLength: maxOutputLength, maxArgsValues: maxOutputValues, maxArgsDepth: maxOutputDepth },
  };
}

/** The `names` option as a map, each target a valid name that fits beside the prefix and no other entry's. */
function checkNames(
  names: McpToolsOptions['names'],
  prefix: string,
  fail: (option: string, expected: string, received: unknown) => never,
): ReadonlyMap<string, string> {
  if (names === undefined) return NO_NAMES;
  if (typeof names !== 'object' || names === null || Array.isArray(names)) fail('names', 'an object mapping server tool names to names', names);
  const map = new Map<string, string>();
  const targets = new Map<string, string>();
  for (const [mcpName, local] of Object.entries(names)) {
    const option = `names[${JSON.stringify(mcpName)}]`;
    if (typeof local !== 'string' || local === '' || !NAME_PATTERN.test(local) || prefix.length + local.length > MAX_NAME_LENGTH) {
      fail(option, `1-${MAX_NAME_LENGTH - prefix.length} letters, digits, "_", "-", "." or ":"${prefix === '' ? '' : ' (with the prefix, at most 128)'}`, local);
    }
    const other = targets.get(local);
    if (other !== undefined) fail(option, `a name no other entry maps to (names[${JSON.stringify(other)}] is ${JSON.stringify(local)})`, local);
    targets.set(local, mcpName);
    map.set(mcpName, local);
  }
  return map;
}

/** A character for a message: itself and its code point, so a look-alike (Cyrillic `е`) is told apart. */
function describeChar(char: string): string {
  const code = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `${JSON.stringify(char)} U+${code}`;
}

function resolveMode(tool: McpTool, option: McpToolsOptions['mode'], trustAnnotations: boolean): ToolMode {
  let mode: unknown;
  if (typeof option === 'function') mode = option(tool);
  else if (typeof option === 'string') mode = option;
  else if (option !== undefined && Object.hasOwn(option, tool.name)) mode = option[tool.name];
  if (mode === undefined) return trustAnnotations && tool.annotations?.readOnlyHint === true ? 'parallel' : 'exclusive';
  if (!isMode(mode)) {
    throw new ConfigError('mcpTools', `mode (for ${JSON.stringify(tool.name)})`, '"parallel" or "exclusive"', mode);
  }
  return mode;
}

/** A tool's compiled output schema (`undefined` when it has none), or why it cannot be compiled. */
function compileOutput(schema: unknown, malformed: string | undefined, limits: ArgsLimits): CompiledOutput | string | undefined {
  if (malformed !== undefined) return malformed;
  if (schema === undefined) return undefined;
  try {
    return compileOutputSchema(schema, limits);
  } catch (error) {
    return describeError(error);
  }
}

/** The first non-empty string. */
function firstText(...values: (string | undefined)[]): string | undefined {
  return values.find((value) => typeof value === 'string' && value !== '');
}

function isMode(value: unknown): value is ToolMode {
  return value === 'parallel' || value === 'exclusive';
}
