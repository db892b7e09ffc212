// examples/readme/mcp.ts
// The README's MCP example, run against an in-memory MCP server with two GitHub-like tools.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { askTools, createPipeline, type Approver } from 'toolstream';

const server = new McpServer({ name: 'github', version: '1.0.0' });
server.registerTool('get_issue', { inputSchema: { number: z.number() } }, ({ number }) => ({ content: [{ type: 'text', text: `issue #${number}` }] }));
server.registerTool('create_issue', { inputSchema: { title: z.string() } }, ({ title }) => ({ content: [{ type: 'text', text: `created ${title}` }] }));
const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
await server.connect(serverTransport);
const client = new Client({ name: 'agent', version: '1.0.0' });
await client.connect(clientTransport);
const approve: Approver = async () => 'rejected';

// #region readme
// MCP: the tools of a connected client become pipeline tools
import { mcpTools } from 'toolstream/mcp';
const tools = await mcpTools(client, { prefix: 'mcp__github__' }); // arguments validated against each JSON Schema
const pipeline = createPipeline({ tools, pre: [askTools(['mcp__github__create_*'])], approve });
// #endregion readme

const results = await pipeline.run([
  { id: '1', name: 'mcp__github__get_issue', args: { number: 7 } },
  { id: '2', name: 'mcp__github__get_issue', args: { number: 'seven' } },
  { id: '3', name: 'mcp__github__create_issue', args: { title: 'x' } },
]);
assert.deepEqual(results.map((r) => [r.status, r.error?.code ?? r.content]), [
  ['ok', 'issue #7'],
  ['error', 'invalid_args'],
  ['denied', 'approval_rejected'],
]);
await client.close();
