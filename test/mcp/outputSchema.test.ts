import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createPipeline, type ToolResult } from '../../src/index.js';
import { mcpTools, McpOutputError, type McpToolNotice } from '../../src/mcp/index.js';
import { findMalformation } from '../../src/mcp/malformedSchema.js';
import { compileOutputSchema } from '../../src/mcp/outputSchema.js';
import { connect, type Connection } from './helpers.js';
import { stretched } from '../support/timing.js';

let open: Connection | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/**
 * A low-level SDK `Server` that lists `tools` and answers each call with `answer(name)`. It checks
 * nothing it sends, as a hostile or careless server would not (the high-level `McpServer` checks its
 * own structured content against its output schema).
 */
async function serve(tools: Tool[], answer: (name: string) => CallToolResult, client?: Client): Promise<Connection> {
  const server = new Server({ name: 'output', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request) => answer(request.params.name));
  if (client === undefined) open = await connect(server);
  else {
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    await client.connect(clientTransport);
    open = { client, received: [], calls: () => [], cancellations: () => [], close: async () => (await client.close(), await server.close()) };
  }
  return open;
}

const tool = (name: string, outputSchema?: unknown): Tool => ({ name, inputSchema: { type: 'object' }, ...(outputSchema !== undefined && { outputSchema }) }) as Tool;

/**
 * `^(a+)+$` backtracks exponentially on a run of `a`s that fails at its end: 26 letters took about
 * 3 s per check on the event loop before the fix (each letter doubles it). A letter of its own for
 * each test: V8 compiles a regular expression it ran before to native code, about ten times faster.
 */
function catastrophic(letter: string) {
  return {
    schema: { type: 'object', properties: { slug: { type: 'string', pattern: `^(${letter}+)+$` } }, required: ['slug'] },
    value: { slug: `${letter.repeat(26)}!` },
  };
}

/**
 * Runs `work` and measures the longest time the event loop went without running a 5 ms timer: a
 * synchronous stretch of validation shows as one long gap. A last timer after `work` catches a stall
 * at its very end.
 */
async function longestStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const tick = () => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  };
  const timer = setInterval(tick, 5);
  try {
    const value = await work();
    await new Promise((resolve) => setTimeout(resolve, 20));
    tick();
    return { value, stallMs };
  } finally {
    clearInterval(timer);
  }
}

function failure(result: ToolResult | undefined): McpOutputError {
  if (result?.status !== 'error' || result.error.code !== 'tool_error') throw new Error(`expected tool_error, got ${JSON.stringify(result?.error)}`);
  const { cause } = result.error;
  if (!(cause instanceof McpOutputError)) throw new Error(`expected an McpOutputError, got ${String(cause)}`);
  return cause;
}

describe('mcpTools and output schemas: a server cannot freeze the event loop', () => {
  it('does not check a catastrophic output pattern (relaxed, with a notice): the call completes and the loop never stalls', async () => {
    const notices: McpToolNotice[] = [];
    const { schema, value } = catastrophic('a');
    const { client } = await serve([tool('slug', schema)], () => ({ content: [{ type: 'text', text: 'a slug' }], structuredContent: value }));
    const pipeline = createPipeline({ tools: await mcpTools(client, { onNotice: (n) => notices.push(n) }) });

    const { value: [result], stallMs } = await longestStall(() => pipeline.run([{ id: '1', name: 'slug', args: {} }]));

    // Generous: before the fix the SDK's ajv check blocked the loop for seconds in this call.
    expect(stallMs).toBeLessThan(stretched(200));
    expect(result).toMatchObject({ status: 'ok', value, content: 'a slug' });
    expect(notices).toEqual([
      expect.objectContaining({ kind: 'relaxed', name: 'slug', schema: 'outputSchema', keywords: ['/properties/slug/pattern'] }),
    ]);
  });

  it('keeps the SDK’s ajv out even when the caller listed the tools on the same client itself', async () => {
    const { schema, value } = catastrophic('b');
    const { client } = await serve([tool('slug', schema)], () => ({ content: [], structuredContent: value }));
    await client.listTools(); // the SDK compiles and caches an ajv validator for `slug` here
    const pipeline = createPipeline({ tools: await mcpTools(client) });

    const { value: [result], stallMs } = await longestStall(() => pipeline.run([{ id: '1', name: 'slug', args: {} }]));

    expect(stallMs).toBeLessThan(stretched(200));
    expect(result).toMatchObject({ status: 'ok', value });
  });

  it('never asks the client’s JSON Schema validator for anything, in listing or calls', async () => {
    const compiled: unknown[] = [];
    const ajv = new AjvJsonSchemaValidator();
    const jsonSchemaValidator = { getValidator: <T>(schema: Parameters<typeof ajv.getValidator>[0]) => (compiled.push(schema), ajv.getValidator<T>(schema)) };
    const client = new Client({ name: 'toolstream-test', version: '1.0.0' }, { jsonSchemaValidator });
    await serve([tool('count', { type: 'object', properties: { n: { type: 'integer' } } })], () => ({ content: [], structuredContent: { n: 1 } }), client);

    const [result] = await createPipeline({ tools: await mcpTools(client) }).run([{ id: '1', name: 'count', args: {} }]);

    expect(result).toMatchObject({ status: 'ok', value: { n: 1 } });
    expect(compiled).toEqual([]);
  });
});

describe('mcpTools checks structured output against the vetted output schema', () => {
  const schema = {
    type: 'object',
    properties: { id: { type: 'string', pattern: '^[a-z]+(-[a-z]+)*$' }, items: { type: 'array', items: { type: 'integer' } } },
    required: ['id'],
  };
  const answers: Record<string, CallToolResult> = {
    good: { content: [{ type: 'text', text: 'fine' }], structuredContent: { id: 'abc-def', items: [1, 2] } },
    bad: { content: [{ type: 'text', text: 'wrong' }], structuredContent: { id: 'ABC', items: [1, 'two'] } },
    none: { content: [{ type: 'text', text: 'no structure' }] },
    error: { isError: true, content: [{ type: 'text', text: 'it failed' }] },
    big: { content: [], structuredContent: { id: 'big', items: Array.from({ length: 50 }, (_, i) => i) } },
  };

  async function run(options: Parameters<typeof mcpTools>[1] = {}) {
    const { client } = await serve(Object.keys(answers).map((name) => tool(name, schema)), (name) => answers[name]!);
    const pipeline = createPipeline({ tools: await mcpTools(client, options) });
    return pipeline.run(Object.keys(answers).map((name, i) => ({ id: String(i), name, args: {} })));
  }

  it('passes matching content, and gives tool_error for content that fails it, is missing or is beyond a limit', async () => {
    const [good, bad, none, error, big] = await run({ maxOutputValues: 20, onError: 'continue' });

    expect(good).toMatchObject({ status: 'ok', value: answers['good']!.structuredContent, content: 'fine' });
    const mismatch = failure(bad);
    expect(mismatch.problem.reason).toBe('mismatch');
    expect(mismatch.problem.reason === 'mismatch' && mismatch.problem.issues.map((issue) => issue.path)).toEqual([['id'], ['items', 1]]);
    expect(bad?.content).toMatch(/MCP tool "bad" returned structured content that does not match its output schema:\n- id: .*\n- items\[1\]: /);
    expect(failure(none).problem).toEqual({ reason: 'missing' });
    // An error result is the server's report, not a value: not checked.
    expect(error).toMatchObject({ status: 'error', content: expect.stringContaining('it failed') });
    expect(failure(big).problem).toEqual({ reason: 'too_large', limit: 'maxOutputValues', max: 20 });
  });

  it('with output: "text" uses no structured content, so checks none', async () => {
    const [good, bad, none, , big] = await run({ output: 'text', maxOutputValues: 20, onError: 'continue' });
    expect([good, bad, none, big].map((r) => [r?.status, r?.value])).toEqual([
      ['ok', 'fine'],
      ['ok', 'wrong'],
      ['ok', 'no structure'],
      ['ok', ''],
    ]);
  });

  it('checks maxOutputLength, maxOutputValues and maxOutputDepth at once', async () => {
    const { client } = await serve([tool('a')], () => ({ content: [] }));
    await expect(mcpTools(client, { maxOutputLength: 0 })).rejects.toThrow(/`maxOutputLength` must be a positive integer, or Infinity/);
    await expect(mcpTools(client, { maxOutputValues: 1.5 })).rejects.toThrow(ConfigError);
    await expect(mcpTools(client, { maxOutputDepth: 1001 })).rejects.toThrow(/`maxOutputDepth` must be an integer from 1 to 1000/);
    expect(await mcpTools(client, { maxOutputLength: Infinity, maxOutputValues: Infinity, maxOutputDepth: 1000 })).toHaveLength(1);
  });
});

describe('mcpTools and malformed output schemas: one tool is skipped, never the server', () => {
  const tools = [
    tool('plain'),
    tool('typed', { type: 'object', properties: { n: { type: 'integer' } } }),
    tool('misspelt', { type: 'object', properties: { n: { type: 'integr' } } }), // ajv: "type must be JSONType or JSONType[]"
    tool('list', { type: 'array', items: { type: 'string' } }), // not an object schema: the SDK's listing schema rejects it
    tool('unterminated', { type: 'object', properties: { s: { type: 'string', pattern: '(' } } }),
    tool('dangling', { type: 'object', properties: { s: { $ref: '#/$defs/missing' } } }),
  ];
  const answer = (name: string): CallToolResult => ({ content: [{ type: 'text', text: `${name} ran` }], structuredContent: { n: 1 } });

  it('skips each tool whose output schema is malformed with a notice, and offers and runs the others', async () => {
    const notices: McpToolNotice[] = [];
    const { client } = await serve(tools, answer);

    const offered = await mcpTools(client, { onNotice: (n) => notices.push(n) });

    expect(offered.map((t) => t.name)).toEqual(['plain', 'typed']);
    const skipped = notices.filter((n) => n.kind === 'skipped');
    expect(skipped.map((n) => [n.tool.name, n.kind === 'skipped' && n.reason])).toEqual([
      ['misspelt', 'invalid_output_schema'],
      ['list', 'invalid_output_schema'],
      ['unterminated', 'invalid_output_schema'],
      ['dangling', 'invalid_output_schema'],
    ]);
    expect(skipped.map((n) => n.message)).toEqual([
      expect.stringMatching(/"misspelt" skipped: its output schema cannot be checked \(\/properties\/n\/type: "integr" is not a JSON type\)/),
      expect.stringMatching(/"list" skipped: its output schema cannot be checked \(type: .*"object"/),
      expect.stringMatching(/"unterminated" skipped: .*\/properties\/s\/pattern: "\(" is not a regular expression/),
      expect.stringMatching(/"dangling" skipped: .*"#\/\$defs\/missing" names no definition/),
    ]);
    const results = await createPipeline({ tools: offered }).run([
      { id: '1', name: 'plain', args: {} },
      { id: '2', name: 'typed', args: {} },
    ]);
    expect(results.map((r) => [r.status, r.content])).toEqual([
      ['ok', 'plain ran'],
      ['ok', 'typed ran'],
    ]);
  });

  it('offers them all with output: "text", which never reads structured content', async () => {
    const { client } = await serve(tools, answer);
    const offered = await mcpTools(client, { output: 'text' });
    expect(offered.map((t) => t.name)).toEqual(tools.map((t) => t.name));
    const [result] = await createPipeline({ tools: offered }).run([{ id: '1', name: 'misspelt', args: {} }]);
    expect(result).toMatchObject({ status: 'ok', value: 'misspelt ran' });
  });
});

describe('compileOutputSchema', () => {
  const Node: z.ZodType<{ name: string; children: unknown[] }> = z.object({ name: z.string(), get children() { return z.array(Node); } });
  const rich = z.object({
    id: z.string().regex(/^[a-z]+(-[a-z]+)*$/),
    kind: z.enum(['issue', 'pull']),
    count: z.number().int().min(0).max(100),
    ratio: z.number().gt(0).multipleOf(0.5).nullable(),
    tags: z.array(z.string()).min(1).optional(),
    pair: z.tuple([z.string(), z.number()]),
    meta: z.record(z.string(), z.unknown()),
    event: z.discriminatedUnion('type', [z.object({ type: z.literal('a'), a: z.string() }), z.object({ type: z.literal('b'), b: z.boolean() })]),
    tree: Node,
  });
  const value = { id: 'ab-cd', kind: 'pull', count: 3, ratio: null, pair: ['x', 1], meta: {}, event: { type: 'b', b: true }, tree: { name: 'r', children: [{ name: 'c', children: [] }] } };

  it('takes the schemas zod writes for the SDK’s McpServer (draft-07 and 2020-12) and checks values against them', () => {
    for (const target of ['draft-7', 'draft-2020-12'] as const) {
      const schema = z.toJSONSchema(rich, { target });
      expect(findMalformation(schema)).toBeUndefined();
      const output = compileOutputSchema(schema);
      expect(output.check(value)).toBeUndefined();
      expect(output.check({ ...value, count: 101 })).toMatchObject({ reason: 'mismatch', issues: [{ path: ['count'] }] });
    }
  });

  it('takes what JSON Schema allows: boolean subschemas, draft-07 item arrays, `#`, remote references (relaxed)', () => {
    const schema = {
      type: 'object',
      properties: { any: true, never: false, pair: { type: 'array', items: [{ type: 'string' }], additionalItems: false }, self: { $ref: '#' }, far: { $ref: 'https://example.test/s.json' } },
      additionalProperties: { type: ['string', 'null'] },
    };
    expect(findMalformation(schema)).toBeUndefined();
    expect(compileOutputSchema(schema).relaxed).toEqual(['/properties/far/$ref']);
  });

  it('names the first malformed place and what is wrong with it', () => {
    const cases: [unknown, string][] = [
      [{ type: 'object', properties: { n: { type: ['integer', 'float'] } } }, '/properties/n/type: "float" is not a JSON type'],
      [{ type: 'object', properties: { n: { type: [] } } }, '/properties/n/type: must be a JSON type or a non-empty array of them'],
      [{ type: 'object', properties: { n: 5 } }, '/properties/n: a schema must be an object or a boolean'],
      [{ type: 'object', properties: [] }, '/properties: must be an object of schemas'],
      [{ type: 'object', anyOf: [] }, '/anyOf: must be a non-empty array of schemas'],
      [{ type: 'object', required: 'n' }, '/required: must be an array of strings'],
      [{ type: 'object', properties: { s: { maxLength: -1 } } }, '/properties/s/maxLength: must be a non-negative integer'],
      [{ type: 'object', properties: { s: { enum: 'a' } } }, '/properties/s/enum: must be an array'],
      [{ type: 'object', properties: { s: { pattern: 5 } } }, '/properties/s/pattern: 5 is not a regular expression'],
      [{ type: 'object', patternProperties: { '[': {} } }, '/patternProperties: "[" is not a regular expression'],
      [{ type: 'object', properties: { s: { $ref: 5 } } }, '/properties/s/$ref: must be a string'],
      [{ type: 'object', $defs: { a: {} }, properties: { s: { $ref: '#/$defs/b' } } }, '/properties/s/$ref: "#/$defs/b" names no definition of the schema'],
    ];
    for (const [schema, problem] of cases) {
      expect(findMalformation(schema)).toBe(problem);
      expect(() => compileOutputSchema(schema)).toThrow(problem);
    }
    expect(() => compileOutputSchema({ type: 'array' })).toThrow('it is not an object schema ("type": "object")');
  });

  it('walks a deeply nested schema without recursion', () => {
    let schema: Record<string, unknown> = { type: 'strin' };
    for (let i = 0; i < 100_000; i++) schema = { type: 'array', items: schema };
    expect(findMalformation(schema)).toMatch(/\/items\/type: "strin" is not a JSON type$/);
  });
});
