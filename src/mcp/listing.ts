import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { cut } from '../util/describe.js';
import { formatPath } from '../util/formatIssues.js';
import { isRecord } from '../util/validate.js';
import type { McpClient, McpTool } from './types.js';

/** The most pages of `tools/list` followed: a server that never stops paginating cannot hang the caller. */
const MAX_PAGES = 1000;

/**
 * One page of `tools/list`, each tool left to be read on its own (see {@link readTool}): with the SDK's
 * `ListToolsResultSchema`, one tool whose output schema has another root `type` fails the whole page.
 */
const PAGE = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** A tool of the listing, and why its `outputSchema` was taken out of it, if it was. */
export interface ListedTool {
  readonly tool: McpTool;
  /** Set when the output schema does not have the shape MCP requires; the tool is then listed without it. */
  readonly badOutputSchema?: string;
}

/**
 * Every tool of the server (following `nextCursor` pagination), through the client's `request` and
 * never its `listTools`: the SDK's `listTools` compiles each `outputSchema` with ajv on the event loop
 * (and rejects the whole listing when one cannot be compiled), and caches the validators for its
 * `callTool`. Nothing is cached here; `mcpTools` compiles the schemas itself.
 *
 * @throws the request's error, a tool that is not an MCP tool (other than by its output schema), or a
 *   server that paginates without end.
 *
 * @example
 * ```ts
 * for (const { tool, badOutputSchema } of await listAllTools(client, undefined)) console.log(tool.name, badOutputSchema);
 * ```
 */
export async function listAllTools(client: McpClient, signal: AbortSignal | undefined): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  const cursors = new Set<string>();
  const requestOptions: RequestOptions | undefined = signal === undefined ? undefined : { signal };
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const params = cursor === undefined ? undefined : { cursor };
    const result = await client.request({ method: 'tools/list', ...(params !== undefined && { params }) }, PAGE, requestOptions);
    for (const tool of result.tools) tools.push(readTool(tool));
    cursor = result.nextCursor;
    // An empty cursor is read as the end: some servers send "" rather than leaving it out.
    if (cursor === undefined || cursor === '') return tools;
    if (cursors.has(cursor)) throw new Error(`mcpTools: the server sent the page cursor ${JSON.stringify(cursor)} twice`);
    cursors.add(cursor);
  }
  throw new Error(`mcpTools: the server listed more than ${MAX_PAGES} pages of tools`);
}

/**
 * A listed tool read with the SDK's `ToolSchema`, as `listTools` reads each; one whose only fault is
 * the shape of its `outputSchema` is read without it, for `mcpTools` to skip with a notice.
 */
function readTool(raw: unknown): ListedTool {
  const parsed = ToolSchema.safeParse(raw);
  if (parsed.success) return { tool: parsed.data };
  if (isRecord(raw) && parsed.error.issues.every((issue) => issue.path[0] === 'outputSchema')) {
    const { outputSchema: _malformed, ...rest } = raw;
    const tool = ToolSchema.safeParse(rest);
    if (tool.success) {
      const why = parsed.error.issues.map((issue) => `${formatPath(issue.path.slice(1))}: ${issue.message}`).join('; ');
      return { tool: tool.data, badOutputSchema: cut(why, 300) };
    }
  }
  throw parsed.error;
}
