/**
 * `toolstream/mcp` — the tools of an MCP server as pipeline tools. Needs `@modelcontextprotocol/sdk`
 * (an optional peer dependency) for its types and the schemas listings and results are read with:
 * pass in a connected `Client`.
 *
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { mcpTools } from 'toolstream/mcp';
 *
 * const pipeline = createPipeline({ tools: await mcpTools(client, { prefix: 'mcp__github__' }) });
 * ```
 *
 * @packageDocumentation
 */
export { mcpTools, mcpToolOf } from './mcpTools.js';
export { McpOutputError, McpToolError } from './types.js';
export type { McpClient, McpOutputProblem, McpSkipReason, McpTool, McpToolNotice, McpToolsOptions } from './types.js';
export { renderContent } from './renderContent.js';
