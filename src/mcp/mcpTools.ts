import { ConfigError } from '../errors.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, type AnyTool, type ToolContext, type ToolMode } from '../defineTool.js';
import { describeError } from '../internal/describe.js';
import { renderValue } from '../internal/renderContent.js';
import { isCount, isObject, isPositiveDuration } from '../internal/validate.js';
import { compileInputSchema, DEFAULT_ARGS_LIMITS, type ArgsLimits } from './inputSchema.js';
import { renderContent } from './renderContent.js';
import { McpToolError, type McpClient, type McpSkipReason, type McpTool, type McpToolNotice, type McpToolsOptions } from './types.js';

/** The most pages of `tools/list` followed: a server that never stops paginating cannot hang the caller. */
const MAX_PAGES = 1000;
const NAME_PATTERN = /^[A-Za-z0-9_.:-]*$/;
const UNSAFE_NAME_CHARS = /[^A-Za-z0-9_.:-]/gu;
const MAX_NAME_LENGTH = 128;
const NO_NAMES: ReadonlyMap<string, string> = new Map();
/** Deeper checks would recurse further than zod's validators comfortably do. */
const MAX_ARGS_DEPTH = 1000;

const listed = new WeakMap<AnyTool, McpTool>();
/** The text of its content blocks, for each structured value a call returned: what the model reads. */
const blockTexts = new WeakMap<object, string>();

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
 * - **execute** — `client.callTool` with the call's signal: a timeout, cancel-rest, the run's abort or
 *   an unsubscribe cancels the MCP request (the server is sent `notifications/cancelled` and its
 *   handler's signal aborts). The model reads the text of the server's content blocks; the result's
 *   `value` is the `structuredContent` (see `output`). `isError: true` throws an {@link McpToolError}
 *   → `tool_error`; a protocol error (unknown tool, closed connection, the SDK's request timeout)
 *   rejects → `tool_error`.
 * - **description** — the server's description, else its title, else its name (the first that is not empty).
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

  for (const listedTool of await listAllTools(client, options.signal)) {
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

    const mode = resolveMode(listedTool, options.mode, settings.trustAnnotations);
    const tool = defineTool({
      name,
      description: firstText(listedTool.description, listedTool.title, listedTool.annotations?.title) ?? mcpName,
      input: input.schema,
      mode,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      ...(options.onError !== undefined && { onError: options.onError }),
      execute: (args, ctx) => callTool(client, mcpName, args as Record<string, unknown>, ctx, settings),
      render: renderForModel,
    });
    taken.add(name);
    listed.set(tool, listedTool);
    tools.push(tool);

    if (input.relaxed.length > 0) {
      notify({
        kind: 'relaxed',
        name,
        keywords: input.relaxed,
        tool: listedTool,
        message: `MCP tool ${JSON.stringify(mcpName)}: ${input.relaxed.join(', ')} of its input schema are left to the server to check`,
      });
    }
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
  if (!isCount(maxArgsDepth, 1) || maxArgsDepth > MAX_ARGS_DEPTH) fail('maxArgsDepth', `an integer from 1 to ${MAX_ARGS_DEPTH}`, maxArgsDepth);
  if (signal !== undefined && !(signal instanceof AbortSignal)) fail('signal', 'an AbortSignal', signal);
  if (onNotice !== undefined && typeof onNotice !== 'function') fail('onNotice', 'a function', onNotice);
  return {
    prefix,
    names: checkNames(names, prefix, fail),
    trustAnnotations,
    requestTimeoutMs: requestTimeoutMs ?? timeoutMs,
    output,
    limits: { maxArgsLength, maxArgsValues, maxArgsDepth },
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

/** The first non-empty string. */
function firstText(...values: (string | undefined)[]): string | undefined {
  return values.find((value) => typeof value === 'string' && value !== '');
}

function isMode(value: unknown): value is ToolMode {
  return value === 'parallel' || value === 'exclusive';
}

async function listAllTools(client: McpClient, signal: AbortSignal | undefined): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  const cursors = new Set<string>();
  const requestOptions: RequestOptions | undefined = signal === undefined ? undefined : { signal };
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, requestOptions);
    tools.push(...result.tools);
    cursor = result.nextCursor;
    // An empty cursor is read as the end: some servers send "" rather than leaving it out.
    if (cursor === undefined || cursor === '') return tools;
    if (cursors.has(cursor)) throw new Error(`mcpTools: the server sent the page cursor ${JSON.stringify(cursor)} twice`);
    cursors.add(cursor);
  }
  throw new Error(`mcpTools: the server listed more than ${MAX_PAGES} pages of tools`);
}

/**
 * One call. The request gets a signal of its own, linked to the call's and unlinked when the call
 * settles: the SDK never removes the abort listener it adds, and aborting a signal after the response
 * would still send the server a cancellation.
 */
async function callTool(
  client: McpClient,
  name: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
  settings: Settings,
): Promise<unknown> {
  const { signal } = ctx;
  const controller = new AbortController();
  const abort = (): void => controller.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  try {
    const requestOptions: RequestOptions = { signal: controller.signal };
    if (settings.requestTimeoutMs !== undefined) requestOptions.timeout = settings.requestTimeoutMs;
    const result = await client.callTool({ name, arguments: args }, undefined, requestOptions);
    return toValue(name, result, settings.output);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

function toValue(name: string, result: Awaited<ReturnType<McpClient['callTool']>>, output: Settings['output']): unknown {
  // The SDK's compatibility shape (protocol 2024-10-07): `{ toolResult }` instead of content blocks.
  if (!Array.isArray(result.content)) return 'toolResult' in result ? result.toolResult : undefined;
  const callResult = result as CallToolResult;
  const text = renderContent(callResult.content);
  if (callResult.isError === true) {
    throw new McpToolError(name, text === '' ? 'the MCP server reported an error without a message' : text, callResult);
  }
  const structured = callResult.structuredContent;
  if (output === 'text' || !isObject(structured)) return text;
  // The text is keyed by the value's identity; a client that hands out one object twice gets a copy.
  const value = blockTexts.has(structured) ? structuredClone(structured) : structured;
  if (text !== '') blockTexts.set(value, text);
  return value;
}

/**
 * The model-facing text of a call's value: the content blocks that came with a structured value (the
 * text the server wrote for the model), else the value as the pipeline renders any value (strings as
 * they are, anything else as JSON). A value a post-execute policy put in its place was never keyed,
 * so it renders as JSON.
 */
function renderForModel(value: unknown): string {
  const text = isObject(value) ? blockTexts.get(value) : undefined;
  return text ?? renderValue(value, false);
}
