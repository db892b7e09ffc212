import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, createPipeline, denyTools, toolSchemas, type AnyTool, type ToolMode, type ToolResult } from '../../src/index.js';
import { mcpToolOf, mcpTools, McpToolError, renderContent, type McpToolNotice } from '../../src/mcp/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, githubServer, listingServer, within, type Connection } from './helpers.js';
import { stretched } from '../support/timing.js';

let open: Connection | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function github() {
  const server = githubServer();
  open = await connect(server.server);
  return { ...server, connection: open };
}

const byName = (tools: readonly AnyTool[], name: string): AnyTool => {
  const tool = tools.find((t) => t.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool;
};

/** The paths of an `invalid_args` result's issues. */
function issuePaths(result: ToolResult | undefined): PropertyKey[][] {
  const { error } = failed(result);
  if (error.code !== 'invalid_args') throw new Error(`expected invalid_args, got ${error.code}`);
  return error.issues.map((issue) => [...issue.path]);
}

function failed(result: ToolResult | undefined) {
  if (result === undefined || result.status === 'ok') throw new Error(`expected a failed result, got ${result?.status}`);
  return result;
}

describe('mcpTools over an in-memory MCP server', () => {
  it('turns every listed tool into a pipeline tool: prefixed name, description, untrusted modes', async () => {
    const { connection } = await github();
    const tools = await mcpTools(connection.client, { prefix: 'mcp__github__' });

    expect(tools.map((t) => t.name)).toEqual([
      'mcp__github__search_issues',
      'mcp__github__create_issue',
      'mcp__github__merge_pull_request',
      'mcp__github__wait',
      'mcp__github__render',
    ]);
    expect(byName(tools, 'mcp__github__search_issues').description).toBe('Search the issues of a repository');
    expect(byName(tools, 'mcp__github__wait').description).toBe('Wait'); // no description: the title
    // Annotations are hints from the server: not trusted unless the caller says so.
    expect(tools.every((t) => t.mode === 'exclusive')).toBe(true);
    expect(Object.isFrozen(tools[0])).toBe(true);
  });

  it('runs a call through the pipeline and gives the content blocks as text', async () => {
    const { connection } = await github();
    const pipeline = createPipeline({ tools: await mcpTools(connection.client) });

    const [result] = await pipeline.run([{ id: 'c1', name: 'search_issues', args: '{"query":"flaky test","limit":5}' }]);

    expect(result).toMatchObject({ status: 'ok', content: '2 issues match "flaky test"\nlimit 5', started: true });
    expect(result?.value).toBe('2 issues match "flaky test"\nlimit 5');
    expect(connection.calls()).toEqual(['search_issues']);
  });

  it('gives the model the content blocks and keeps structuredContent as the value (or the text, with output: "text")', async () => {
    const { connection, created } = await github();
    const structured = createPipeline({ tools: await mcpTools(connection.client) });
    const text = createPipeline({ tools: await mcpTools(connection.client, { output: 'text' }) });
    const call = { id: 'c1', name: 'create_issue', args: { title: 'Fix CI' } };

    const [a] = await structured.run([call]);
    const [b] = await text.run([call]);

    // The model reads what the server wrote for it, not the structured content's JSON.
    expect(a).toMatchObject({ status: 'ok', content: 'Opened #42: Fix CI', value: { number: 42, url: 'https://example.test/issues/42' } });
    expect(b).toMatchObject({ status: 'ok', value: 'Opened #42: Fix CI', content: 'Opened #42: Fix CI' });
    expect(created).toEqual(['Fix CI', 'Fix CI']);
  });

  it('gives the model the structured JSON when the server sent no content block, and a post policy may still replace it', async () => {
    const server = new Server({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} } });
    const shared = { n: 1 }; // one object for every answer: each call still gets the right text
    let calls = 0;
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'bare', inputSchema: { type: 'object' } }, { name: 'same', inputSchema: { type: 'object' } }] }));
    server.setRequestHandler(CallToolRequestSchema, (request) =>
      request.params.name === 'bare'
        ? { content: [], structuredContent: { n: 1 } }
        : { content: [{ type: 'text', text: `answer ${++calls}` }], structuredContent: shared },
    );
    open = await connect(server);
    const tools = await mcpTools(open.client);

    const [bare, first, second] = await createPipeline({ tools }).run([
      { id: '1', name: 'bare', args: {} },
      { id: '2', name: 'same', args: {} },
      { id: '3', name: 'same', args: {} },
    ]);
    expect(bare).toMatchObject({ content: '{"n":1}', value: { n: 1 } });
    expect([first?.content, second?.content]).toEqual(['answer 1', 'answer 2']);

    const asJson = createPipeline({ tools, post: [(ctx) => ({ kind: 'accept', content: JSON.stringify(ctx.value) })] });
    expect((await asJson.run([{ id: '4', name: 'same', args: {} }]))[0]?.content).toBe('{"n":1}');
  });

  it('turns isError: true into a tool_error result carrying the rendered text', async () => {
    const { connection } = await github();
    const pipeline = createPipeline({ tools: await mcpTools(connection.client) });

    const result = failed((await pipeline.run([{ id: 'c1', name: 'merge_pull_request', args: { number: 7 } }]))[0]);

    expect(result.status).toBe('error');
    expect(result.error.code).toBe('tool_error');
    expect(result.content).toContain('Pull request #7 has conflicts');
    const cause = (result.error as { cause?: unknown }).cause;
    expect(cause).toBeInstanceOf(McpToolError);
    expect((cause as McpToolError).tool).toBe('merge_pull_request');
    expect((cause as McpToolError).result.isError).toBe(true);
  });

  it('rejects schema-invalid arguments with invalid_args naming the paths, and never calls the server', async () => {
    const { connection } = await github();
    const pipeline = createPipeline({ tools: await mcpTools(connection.client, { prefix: 'gh.' }) });

    const results = await pipeline.run([
      { id: 'c1', name: 'gh.search_issues', args: { query: '', limit: 0.5, extra: true } },
      { id: 'c2', name: 'gh.search_issues', args: { limit: 500 } },
      { id: 'c3', name: 'gh.create_issue', args: [] },
      { id: 'c4', name: 'gh.create_issue', args: { title: 'ok', labels: ['a', 3] } },
    ]);

    const [c1, c2, c3, c4] = results.map(failed);
    expect(results.map((r) => r.error?.code)).toEqual(['invalid_args', 'invalid_args', 'invalid_args', 'invalid_args']);
    expect(issuePaths(c1)).toEqual([['query'], ['limit']]);
    expect(c1!.content).toMatch(/- query: .*>=1 characters/);
    expect(c1!.content).toMatch(/- limit: .*expected int/);
    expect(issuePaths(c2)).toEqual([['query'], ['limit']]);
    expect(c2!.content).toMatch(/- limit: Too big/);
    expect(issuePaths(c3)).toEqual([[]]);
    expect(c3!.content).toMatch(/- \(root\): .*expected object/);
    expect(issuePaths(c4)).toEqual([['labels', 1]]);
    expect(c4!.content).toContain('- labels[1]:');
    expect(results.every((r) => !r.started)).toBe(true);
    expect(connection.calls()).toEqual([]);
  });

  it('maps readOnlyHint to parallel only with trustAnnotations, and lets mode decide first', async () => {
    const { connection } = await github();
    const modes = (tools: AnyTool[]) => Object.fromEntries(tools.map((t) => [t.name, t.mode]));

    expect(modes(await mcpTools(connection.client, { trustAnnotations: true }))).toEqual({
      search_issues: 'parallel',
      create_issue: 'exclusive', // readOnlyHint: false
      merge_pull_request: 'exclusive', // no readOnlyHint: it defaults to false
      wait: 'parallel',
      render: 'exclusive',
    });
    expect(
      modes(await mcpTools(connection.client, { trustAnnotations: true, mode: { wait: 'exclusive', render: 'parallel' } })),
    ).toMatchObject({ search_issues: 'parallel', wait: 'exclusive', render: 'parallel' });
    expect(
      modes(await mcpTools(connection.client, { mode: (tool) => (tool.name.startsWith('search') ? 'parallel' : undefined) })),
    ).toEqual({
      search_issues: 'parallel',
      create_issue: 'exclusive',
      merge_pull_request: 'exclusive',
      wait: 'exclusive',
      render: 'exclusive',
    });
    expect(Object.values(modes(await mcpTools(connection.client, { mode: 'parallel' })))).toEqual(Array<ToolMode>(5).fill('parallel'));
    // A map is read for its own keys only.
    expect(modes(await mcpTools(connection.client, { mode: { constructor: 'parallel' } as Record<string, ToolMode> })).wait).toBe('exclusive');
  });

  it('runs trusted read-only tools side by side on the server, untrusted ones one at a time', async () => {
    // Each waits long enough for the other two to start beside it, on a busy machine too.
    const ms = Math.round(stretched(200));
    const calls = ['a', 'b', 'c'].map((id) => ({ id, name: 'wait', args: { ms } }));
    const trusted = await github();
    const results = await createPipeline({ tools: await mcpTools(trusted.connection.client, { trustAnnotations: true }) }).run(calls);
    expect(results.map((r) => r.content)).toEqual(Array(3).fill(`waited ${ms} ms`));
    expect(trusted.wait.maxRunning).toBe(3);
    await open?.close();

    const untrusted = await github();
    await createPipeline({ tools: await mcpTools(untrusted.connection.client) }).run(calls);
    expect(untrusted.wait.maxRunning).toBe(1);
  });

  it('cancels the MCP request when the call times out: the server handler sees its signal abort', async () => {
    const { connection, wait } = await github();
    // The SDK's own request timeout is far away: only the call's signal can cancel the request.
    const pipeline = createPipeline({ tools: await mcpTools(connection.client, { timeoutMs: 100, requestTimeoutMs: 60_000 }) });

    const started = performance.now();
    const result = failed((await pipeline.run([{ id: 'slow', name: 'wait', args: { ms: 100_000 } }]))[0]);

    expect(result.error.code).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(stretched(2_000)); // not the body's 100 s
    await within(wait.aborted.promise, 2_000, "the handler to see its abort"); // the handler's extra.signal aborted
    expect(connection.cancellations()).toHaveLength(1);
    expect(wait.running).toBe(0);
  });

  it('fails the call with tool_error when the SDK request timeout comes first, and cancels the request', async () => {
    const { connection, wait } = await github();
    const pipeline = createPipeline({ tools: await mcpTools(connection.client, { requestTimeoutMs: 50 }) });

    const result = failed((await pipeline.run([{ id: 'slow', name: 'wait', args: { ms: 10_000 } }]))[0]);

    expect(result.error.code).toBe('tool_error');
    expect(result.content).toMatch(/Request timed out/);
    await within(wait.aborted.promise, 2_000, "the handler to see its abort");
    expect(connection.cancellations()).toHaveLength(1);
  });

  it('cancels the MCP request when the run is aborted', async () => {
    const { connection, wait } = await github();
    const pipeline = createPipeline({ tools: await mcpTools(connection.client) });
    const controller = new AbortController();

    const run = pipeline.run([{ id: 'slow', name: 'wait', args: { ms: 10_000 } }], { signal: controller.signal });
    await within(wait.started.promise, 2_000, "the handler to start");
    controller.abort();
    const result = failed((await run)[0]);

    expect(result.status).toBe('cancelled');
    await within(wait.aborted.promise, 2_000, "the handler to see its abort");
    expect(connection.cancellations()).toHaveLength(1);
  });

  it('cancels a running sibling MCP request when another call fails (cancel-rest)', async () => {
    const { connection, wait } = await github();
    const tools = await mcpTools(connection.client, { mode: { wait: 'parallel', merge_pull_request: 'parallel' } });

    const run = createPipeline({ tools, onError: 'cancel-rest' }).run([
      { id: 'slow', name: 'wait', args: { ms: 10_000 } },
      { id: 'boom', name: 'merge_pull_request', args: { number: 1 } },
    ]);
    const [slow, boom] = (await run).map(failed);

    expect(boom?.error.code).toBe('tool_error');
    expect(slow?.status).toBe('cancelled');
    await within(wait.aborted.promise, 2_000, "the handler to see its abort");
    expect(connection.cancellations()).toHaveLength(1);
  });

  it('sends no cancellation for calls that finished', async () => {
    const { connection } = await github();
    const pipeline = createPipeline({ tools: await mcpTools(connection.client, { timeoutMs: 5_000 }) });
    const results = await pipeline.run([
      { id: 'a', name: 'search_issues', args: { query: 'x' } },
      { id: 'b', name: 'wait', args: { ms: 1 } },
    ]);
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok']);
    expect(connection.calls()).toEqual(['search_issues', 'wait']);
    expect(connection.cancellations()).toEqual([]);
  });

  it('renders every content block type', async () => {
    const { connection } = await github();
    const [result] = await createPipeline({ tools: await mcpTools(connection.client) }).run([{ id: 'r', name: 'render', args: '' }]);

    expect(result?.content).toBe(
      [
        'Report:',
        '[image image/png]',
        '[audio audio/wav]',
        '[resource file:///notes.md]',
        '# Notes',
        '[resource file:///logo.bin application/octet-stream]',
        '[resource link big.csv: file:///big.csv]',
      ].join('\n'),
    );
    expect(renderContent([{ type: 'mystery' }, null])).toBe('[mystery]\n[null]');
  });

  it('offers the model the server’s input schema as listed, and keeps the listed tool for policies', async () => {
    const { connection } = await github();
    const listed = (await connection.client.listTools()).tools;
    const tools = await mcpTools(connection.client, { prefix: 'x_' });

    const schemas = toolSchemas(tools);
    for (const [i, tool] of listed.entries()) {
      const { $schema: _ignored, ...inputSchema } = tool.inputSchema;
      expect(schemas[i]).toEqual({ name: `x_${tool.name}`, description: tools[i]!.description, inputSchema });
      expect(mcpToolOf(tools[i]!)).toEqual(tool);
    }
    expect(mcpToolOf(byName(tools, 'x_merge_pull_request'))?.annotations?.destructiveHint).toBe(true);
  });

  it('passes the listing signal and rejects invalid options', async () => {
    const { connection } = await github();
    await expect(mcpTools(connection.client, { signal: AbortSignal.abort() })).rejects.toThrow();
    await expect(mcpTools(connection.client, { prefix: 'has space' })).rejects.toThrow(/`prefix`/);
    await expect(mcpTools(connection.client, { timeoutMs: 0 })).rejects.toThrow(/`timeoutMs`/);
    await expect(mcpTools(connection.client, { output: 'json' as 'text' })).rejects.toThrow(/`output`/);
    await expect(mcpTools(connection.client, { mode: () => 'sometimes' as 'parallel' })).rejects.toThrow(
      /`mode \(for "search_issues"\)` must be "parallel" or "exclusive"/,
    );
    expect(connection.calls()).toEqual([]);
  });
});

describe('mcpTools with unusual listings', () => {
  const tool = (name: string, inputSchema: Tool['inputSchema'] = { type: 'object' }, extra: Partial<Tool> = {}): Tool => ({
    name,
    inputSchema,
    ...extra,
  });

  async function listing(tools: Tool[], pageSize?: number) {
    const { server, pages } = listingServer(tools, pageSize);
    open = await connect(server);
    return { client: open.client, connection: open, pages };
  }

  it('follows nextCursor through every page', async () => {
    const { client, pages } = await listing(Array.from({ length: 7 }, (_, i) => tool(`t${i}`)), 3);
    const tools = await mcpTools(client);
    expect(tools.map((t) => t.name)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
    expect(pages).toEqual([undefined, 'page-3', 'page-6']);
    // A tool from the first page is called like any other.
    const [result] = await createPipeline({ tools }).run([{ id: '1', name: 't0', args: { a: 1 } }]);
    expect(JSON.parse(result!.content)).toEqual({ name: 't0', arguments: { a: 1 } });
  });

  it('refuses names with characters a tool name may not have, skips the ones it cannot use, and says so', async () => {
    const notices: McpToolNotice[] = [];
    const { client } = await listing([
      tool('get file'),
      tool('get_file'), // no longer taken: 'get file' is refused, not rewritten
      tool('x'.repeat(126)), // 128 with the prefix: fine
      tool('y'.repeat(127)), // 129 with the prefix
      tool('run_job', { type: 'object' }, { execution: { taskSupport: 'required' } }),
      tool('broken', { type: 'object', properties: { a: { type: 'array', items: 5 } } }),
      tool('ünïcode/😀'),
      tool('d\u0435lete_repo'), // a Cyrillic е: sanitising would have offered it as d_lete_repo
    ]);
    const tools = await mcpTools(client, { prefix: 'm_', onNotice: (n) => notices.push(n) });

    expect(tools.map((t) => t.name)).toEqual(['m_get_file', `m_${'x'.repeat(126)}`]);
    expect(notices.map((n) => [n.kind, n.kind === 'skipped' ? n.reason : '', n.tool.name.slice(0, 10)])).toEqual([
      ['skipped', 'unsafe_name', 'get file'],
      ['skipped', 'invalid_name', 'yyyyyyyyyy'],
      ['skipped', 'task_required', 'run_job'],
      ['skipped', 'invalid_schema', 'broken'],
      ['skipped', 'unsafe_name', 'ünïcode/😀'],
      ['skipped', 'unsafe_name', 'd\u0435lete_rep'], // the first 10 characters
    ]);
    expect(notices[0]?.message).toContain('" " U+0020');
    expect(notices[5]?.message).toMatch(/"\u0435" U\+0435.*`names`/);
  });

  it('offers a refused name under the name the caller maps it to, and calls the server by its own', async () => {
    const notices: McpToolNotice[] = [];
    const { client } = await listing([tool('d\u0435lete_repo'), tool('get file'), tool('Delete_Repo')]);
    const tools = await mcpTools(client, {
      prefix: 'mcp__gh__',
      names: { 'd\u0435lete_repo': 'delete_repo_cyrillic', 'get file': 'get_file', unlisted: 'whatever' },
      onNotice: (n) => notices.push(n),
    });

    expect(tools.map((t) => t.name)).toEqual(['mcp__gh__delete_repo_cyrillic', 'mcp__gh__get_file', 'mcp__gh__Delete_Repo']);
    expect(notices).toEqual([]);
    expect(mcpToolOf(tools[0]!)?.name).toBe('d\u0435lete_repo');
    const pipeline = createPipeline({ tools, pre: [denyTools(['mcp__gh__delete_*'])] });
    const [cyrillic, file, cased] = await pipeline.run([
      { id: '1', name: 'mcp__gh__delete_repo_cyrillic', args: {} },
      { id: '2', name: 'mcp__gh__get_file', args: {} },
      { id: '3', name: 'mcp__gh__Delete_Repo', args: {} },
    ]);
    // The deny pattern sees the mapped name, and a case variant, and denies both.
    expect([cyrillic?.error?.code, cased?.error?.code]).toEqual(['denied', 'denied']);
    expect(JSON.parse(file!.content).name).toBe('get file');
  });

  it('checks the names option at once', async () => {
    const { client, connection } = await listing([tool('a')]);
    await expect(mcpTools(client, { names: [] as never })).rejects.toThrow(/`names` must be an object/);
    await expect(mcpTools(client, { names: { a: 'has space' } })).rejects.toThrow(/`names\["a"\]` must be 1-128 letters/);
    await expect(mcpTools(client, { names: { a: '' } })).rejects.toThrow(ConfigError);
    await expect(mcpTools(client, { names: { a: 7 as never } })).rejects.toThrow(/received 7/);
    await expect(mcpTools(client, { prefix: 'p'.repeat(120), names: { a: 'b'.repeat(9) } })).rejects.toThrow(
      /`names\["a"\]` must be 1-8 letters.*with the prefix, at most 128/,
    );
    await expect(mcpTools(client, { names: { a: 'same', b: 'same' } })).rejects.toThrow(
      /`names\["b"\]` must be a name no other entry maps to \(names\["a"\] is "same"\)/,
    );
    expect(connection.received.filter((m) => 'method' in m && m.method === 'tools/list')).toEqual([]);
  });

  it('forwards the arguments exactly as validated: no defaults filled in, no keys stripped', async () => {
    const { client } = await listing([
      tool('echo', {
        type: 'object',
        properties: { mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' }, n: { type: 'integer', default: 3 } },
        required: [],
      }),
    ]);
    const [result] = await createPipeline({ tools: await mcpTools(client) }).run([{ id: '1', name: 'echo', args: { extra: [1] } }]);
    expect(JSON.parse(result!.content)).toEqual({ name: 'echo', arguments: { extra: [1] } });
    expect(result?.args).toEqual({ extra: [1] });
  });

  it('forwards deep-frozen arguments without touching them (bodies receive a frozen snapshot)', async () => {
    const { client } = await listing([tool('echo')]);
    const [echo] = await mcpTools(client);
    const deepFreeze = <T>(value: T): T => {
      if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) deepFreeze(item);
      return Object.freeze(value);
    };
    const args = deepFreeze({ a: { b: [1, { c: 'x' }] } });

    const value = await echo!.execute(args, { signal: new AbortController().signal } as never);

    expect(JSON.parse(value as string)).toEqual({ name: 'echo', arguments: { a: { b: [1, { c: 'x' }] } } });
  });

  it('validates $ref, anyOf, additionalProperties and nested arrays with paths', async () => {
    const { client, connection } = await listing([
      tool('tree', {
        type: 'object',
        $defs: {
          Node: {
            type: 'object',
            properties: { id: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } },
            required: ['id'],
            additionalProperties: false,
          },
        },
        properties: { root: { $ref: '#/$defs/Node' }, when: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
        required: ['root'],
      }),
    ]);
    const pipeline = createPipeline({ tools: await mcpTools(client) });
    const [bad, good] = await pipeline.run([
      { id: '1', name: 'tree', args: { root: { id: 'a', children: [{ id: 'b' }, { children: [], colour: 'red' }] }, when: 3 } },
      { id: '2', name: 'tree', args: { root: { id: 'a', children: [{ id: 'b', children: [] }] }, when: null } },
    ]);
    const issues = issuePaths(bad);
    expect(issues).toEqual(
      expect.arrayContaining([['root', 'children', 1, 'id'], ['root', 'children', 1], ['when']]),
    );
    expect(good?.status).toBe('ok');
    expect(connection.calls()).toEqual(['tree']);
  });

  it('leaves to the server what zod cannot check faithfully, and never rejects what the schema accepts', async () => {
    const notices: McpToolNotice[] = [];
    const { client } = await listing([
      tool('loose', {
        type: 'object',
        properties: {
          link: { type: 'string', format: 'uri-reference' }, // format: an annotation
          id: { type: 'string', format: 'uuid' },
          pick: { enum: [{ x: 1 }, 'none'] }, // structural enum
          name: { type: 'string', not: { const: 'root' } }, // `not`: unsupported
          code: { type: 'string', pattern: '^[a-z]+$' },
        },
        required: ['code'],
      }),
    ]);
    const pipeline = createPipeline({ tools: await mcpTools(client, { onNotice: (n) => notices.push(n) }) });

    const [accepted, rejected] = await pipeline.run([
      { id: '1', name: 'loose', args: { link: '../up', id: '00000000-0000-0000-0000-00000000000g', pick: { x: 1 }, name: 'root', code: 'abc' } },
      { id: '2', name: 'loose', args: { code: 'ABC' } },
    ]);

    expect(accepted?.status).toBe('ok');
    expect(failed(rejected).error.code).toBe('invalid_args'); // the pattern is still checked
    expect(rejected?.content).toContain('- code:');
    expect(notices).toEqual([
      expect.objectContaining({ kind: 'relaxed', name: 'loose', keywords: ['/properties/pick/enum', '/properties/name/not'] }),
    ]);
  });

  it('reports a pattern that could block the event loop as relaxed, and answers the call at once', async () => {
    const notices: McpToolNotice[] = [];
    const { client, connection } = await listing([
      tool('slug', { type: 'object', properties: { slug: { type: 'string', pattern: '^([a-z]+)+$' } }, required: ['slug'] }),
    ]);
    const pipeline = createPipeline({ tools: await mcpTools(client, { onNotice: (n) => notices.push(n) }) });

    const started = performance.now();
    const [result] = await pipeline.run([{ id: '1', name: 'slug', args: { slug: `${'a'.repeat(28)}!` } }]);

    // Generous: before the fix this call blocked the loop for about 10 s (on an idle machine).
    expect(performance.now() - started).toBeLessThan(stretched(1_000));
    expect(result?.status).toBe('ok'); // the server checks its own pattern
    expect(notices).toEqual([expect.objectContaining({ kind: 'relaxed', name: 'slug', keywords: ['/properties/slug/pattern'] })]);
    expect(connection.calls()).toEqual(['slug']);
  });

  it('gives invalid_args for arguments beyond maxArgsLength, maxArgsValues or maxArgsDepth, and never calls the server', async () => {
    const { client, connection } = await listing([tool('echo')]);
    const pipeline = createPipeline({ tools: await mcpTools(client, { maxArgsLength: 100, maxArgsValues: 10, maxArgsDepth: 3 }) });

    const [long, many, deep, fine] = await pipeline.run([
      { id: '1', name: 'echo', args: { text: 'x'.repeat(200) } },
      { id: '2', name: 'echo', args: { list: [1, 2, 3, 4, 5, 6, 7, 8, 9] } },
      { id: '3', name: 'echo', args: { a: { b: { c: { d: 1 } } } } },
      { id: '4', name: 'echo', args: { a: { b: { c: 1 } } } },
    ]);

    expect([long, many, deep].map((r) => failed(r).error.code)).toEqual(['invalid_args', 'invalid_args', 'invalid_args']);
    expect(long?.content).toMatch(/longer than this tool accepts \(100 characters in all\)/);
    expect(many?.content).toMatch(/more than 10 values/);
    expect(deep?.content).toMatch(/nested more than 3 levels deep/);
    expect(fine?.status).toBe('ok');
    expect(connection.calls()).toEqual(['echo']);
  });

  it('checks maxArgsLength, maxArgsValues and maxArgsDepth at once', async () => {
    const { client } = await listing([tool('a')]);
    await expect(mcpTools(client, { maxArgsLength: 0 })).rejects.toThrow(/`maxArgsLength` must be a positive integer, or Infinity/);
    await expect(mcpTools(client, { maxArgsValues: -1 })).rejects.toThrow(/`maxArgsValues` must be a positive integer, or Infinity/);
    await expect(mcpTools(client, { maxArgsLength: 1.5 })).rejects.toThrow(ConfigError);
    await expect(mcpTools(client, { maxArgsDepth: Infinity })).rejects.toThrow(/`maxArgsDepth` must be an integer from 1 to 1000/);
    expect(await mcpTools(client, { maxArgsLength: Infinity, maxArgsValues: Infinity, maxArgsDepth: 1000 })).toHaveLength(1);
  });

  it('gives a protocol error (the server no longer has the tool) as tool_error', async () => {
    const { server } = githubServer();
    const temporary = server.registerTool('temporary', { description: 'soon gone' }, async () => ({ content: [] }));
    open = await connect(server);
    const pipeline = createPipeline({ tools: await mcpTools(open.client) });
    temporary.remove();

    const [result] = await pipeline.run([{ id: '1', name: 'temporary', args: {} }]);

    expect(failed(result).error.code).toBe('tool_error');
    expect(result?.content).toMatch(/temporary.*not found/i);
  });
});
