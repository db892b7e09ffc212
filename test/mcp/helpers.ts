import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type JSONRPCMessage, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { deferred, type Deferred } from '../support/deferred.js';
import { stretched } from '../support/timing.js';
import { z } from 'zod';

/** A connected client, and every message its server received. */
export interface Connection {
  readonly client: Client;
  readonly received: JSONRPCMessage[];
  /** The names of the `tools/call` requests the server received. */
  calls(): string[];
  /** The request ids of the `notifications/cancelled` the server received. */
  cancellations(): unknown[];
  close(): Promise<void>;
}

/** Connects a client to a server through a linked in-memory pair, recording what the server receives. */
export async function connect(server: McpServer | Server): Promise<Connection> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const received: JSONRPCMessage[] = [];
  const deliver = serverTransport.onmessage!;
  serverTransport.onmessage = (message, extra) => {
    received.push(message);
    deliver(message, extra);
  };
  const client = new Client({ name: 'toolstream-test', version: '1.0.0' });
  await client.connect(clientTransport);
  const methodOf = (message: JSONRPCMessage) => ('method' in message ? message.method : undefined);
  return {
    client,
    received,
    calls: () =>
      received.filter((m) => methodOf(m) === 'tools/call').map((m) => (m as unknown as { params: { name: string } }).params.name),
    cancellations: () =>
      received
        .filter((m) => methodOf(m) === 'notifications/cancelled')
        .map((m) => (m as unknown as { params: { requestId: unknown } }).params.requestId),
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** What the `wait` tool of {@link githubServer} saw. */
export interface WaitProbe {
  started: Deferred<void>;
  aborted: Deferred<unknown>;
  running: number;
  maxRunning: number;
}

/**
 * A real `McpServer` with a read-only tool, a write tool with structured output, a tool that reports
 * `isError`, a slow tool that honours its request's abort signal, and one with every content block type.
 */
export function githubServer() {
  const server = new McpServer({ name: 'github', version: '1.0.0' });
  const created: string[] = [];
  const wait: WaitProbe = { started: deferred<void>(), aborted: deferred<unknown>(), running: 0, maxRunning: 0 };

  server.registerTool(
    'search_issues',
    {
      title: 'Search issues',
      description: 'Search the issues of a repository',
      inputSchema: { query: z.string().min(1), limit: z.number().int().min(1).max(50).optional() },
      annotations: { readOnlyHint: true },
    },
    async ({ query, limit }) => ({
      content: [
        { type: 'text', text: `2 issues match "${query}"` },
        { type: 'text', text: `limit ${limit ?? 10}` },
      ],
    }),
  );

  server.registerTool(
    'create_issue',
    {
      description: 'Open an issue',
      inputSchema: { title: z.string(), labels: z.array(z.string()).optional() },
      outputSchema: { number: z.number(), url: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async ({ title }) => {
      created.push(title);
      const issue = { number: 42, url: 'https://example.test/issues/42' };
      return { content: [{ type: 'text', text: `Opened #42: ${title}` }], structuredContent: issue };
    },
  );

  server.registerTool(
    'merge_pull_request',
    { description: 'Merge a pull request', inputSchema: { number: z.number().int() }, annotations: { destructiveHint: true } },
    async ({ number }) => ({ isError: true, content: [{ type: 'text', text: `Pull request #${number} has conflicts` }] }),
  );

  server.registerTool(
    'wait',
    {
      title: 'Wait',
      inputSchema: { ms: z.number() },
      annotations: { readOnlyHint: true },
    },
    ({ ms }, extra) =>
      new Promise((resolve) => {
        wait.running++;
        wait.maxRunning = Math.max(wait.maxRunning, wait.running);
        wait.started.resolve();
        const finish = (text: string) => {
          wait.running--;
          resolve({ content: [{ type: 'text', text }] });
        };
        const timer = setTimeout(() => finish(`waited ${ms} ms`), ms);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          wait.aborted.resolve(extra.signal.reason);
          finish('aborted');
        });
      }),
  );

  server.registerTool('render', { description: 'Every kind of content block' }, async () => ({
    content: [
      { type: 'text', text: 'Report:' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///notes.md', mimeType: 'text/markdown', text: '# Notes' } },
      { type: 'resource', resource: { uri: 'file:///logo.bin', mimeType: 'application/octet-stream', blob: 'AAEC' } },
      { type: 'resource_link', uri: 'file:///big.csv', name: 'big.csv' },
    ],
  }));

  return { server, created, wait };
}

/**
 * A low-level `Server` that lists the given tools in pages of `pageSize` and answers every call by
 * echoing its name and arguments (as JSON), so a test sees exactly what reached the server.
 */
export function listingServer(tools: readonly Tool[], pageSize = tools.length || 1) {
  const server = new Server({ name: 'listing', version: '1.0.0' }, { capabilities: { tools: {} } });
  const pages: (string | undefined)[] = [];
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const cursor = request.params?.cursor;
    pages.push(cursor);
    const start = cursor === undefined ? 0 : Number(cursor.replace('page-', ''));
    const end = start + pageSize;
    return { tools: tools.slice(start, end), ...(end < tools.length && { nextCursor: `page-${end}` }) };
  });
  server.setRequestHandler(CallToolRequestSchema, (request) => ({
    content: [{ type: 'text', text: JSON.stringify({ name: request.params.name, arguments: request.params.arguments }) }],
  }));
  return { server, pages };
}

/**
 * Rejects when `promise` has not settled within `idleMs` (stretched on a busy machine), so a missing
 * event fails fast, with a name.
 */
export async function within<T>(promise: Promise<T>, idleMs: number, what: string): Promise<T> {
  const ms = stretched(idleMs);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
