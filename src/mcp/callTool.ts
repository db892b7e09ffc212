import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { renderValue } from '../util/renderContent.js';
import { isObject } from '../util/validate.js';
import type { ToolContext } from '../types/tool.js';
import type { CompiledOutput } from './outputSchema.js';
import { renderContent } from './renderContent.js';
import { McpOutputError, McpToolError, type McpClient } from './types.js';

/** The text of its content blocks, for each structured value a call returned: what the model reads. */
const blockTexts = new WeakMap<object, string>();

/** How one tool's calls are made and read. */
export interface CallSettings {
  readonly requestTimeoutMs: number | undefined;
  readonly output: 'structured' | 'text';
  /** The tool's compiled `outputSchema` (with `output: 'structured'` only). */
  readonly outputSchema: CompiledOutput | undefined;
}

/**
 * One call, sent as a `tools/call` request through the client's `request` and never its `callTool`:
 * the SDK's `callTool` checks structured content with the ajv validator its `listTools` compiled (on
 * the event loop, without bound), also when the caller listed the tools itself. The structured
 * content is checked here instead, against the vetted output schema.
 *
 * The request gets a signal of its own, linked to the call's and unlinked when the call settles: the
 * SDK never removes the abort listener it adds, and aborting a signal after the response would still
 * send the server a cancellation.
 *
 * @example
 * ```ts
 * const value = await callTool(client, 'search', { q: 'x' }, ctx, { requestTimeoutMs: undefined, output: 'text', outputSchema: undefined });
 * ```
 */
export async function callTool(
  client: McpClient,
  name: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
  settings: CallSettings,
): Promise<unknown> {
  const { signal } = ctx;
  const controller = new AbortController();
  const abort = (): void => controller.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  try {
    const requestOptions: RequestOptions = { signal: controller.signal };
    if (settings.requestTimeoutMs !== undefined) requestOptions.timeout = settings.requestTimeoutMs;
    const result = await client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, requestOptions);
    return toValue(name, result, settings);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

function toValue(name: string, result: CallToolResult, { output, outputSchema }: CallSettings): unknown {
  const text = renderContent(result.content);
  if (result.isError === true) {
    throw new McpToolError(name, text === '' ? 'the MCP server reported an error without a message' : text, result);
  }
  const structured = result.structuredContent;
  const problem = outputSchema?.check(structured);
  if (problem !== undefined) throw new McpOutputError(name, problem, result);
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
 *
 * @example
 * ```ts
 * defineTool({ name, input, execute, render: renderForModel });
 * ```
 */
export function renderForModel(value: unknown): string {
  const text = isObject(value) ? blockTexts.get(value) : undefined;
  return text ?? renderValue(value, false);
}
