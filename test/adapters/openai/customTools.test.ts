import { existsSync, readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type {
  CustomTool,
  FunctionTool,
  ResponseCustomToolCall,
  ResponseCustomToolCallOutput,
  ResponseInputItem,
  ResponseStreamEvent,
  Tool,
} from 'openai/resources/responses/responses';
import { firstValueFrom, Subject, tap, toArray } from 'rxjs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { skippedBecause } from '../../support/skip.js';
import { z } from 'zod';
import {
  fromOpenAIResponsesStream,
  openAICustomTools,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
  type OpenAICustomTools,
} from '../../../src/adapters/openai/index.js';
import { ConfigError, createPipeline, defineTool, IncompleteArguments, RestrictionSet, type ToolCall } from '../../../src/index.js';
import { CORPUS_DIR } from '../corpus/recordings.js';
import { functionCall, response, sdkStream, sequence, toSSE, type Unnumbered } from './helpers.js';
import { dropTurns, withoutTurn } from '../withoutTurn.js';

/** Which patches and files the tools got (reset per pipeline). */
const log: string[] = [];
const applyPatch = defineTool({
  name: 'apply_patch',
  description: 'Apply a unified diff',
  input: z.string(),
  execute: (patch) => (log.push(patch), 'applied'),
});
const runSql = defineTool({
  name: 'run_sql',
  description: 'Run a read-only query',
  input: z.string().startsWith('SELECT'),
  mode: 'parallel',
  execute: (query) => (log.push(query), 'rows'),
});
const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file',
  input: z.object({ path: z.string() }),
  mode: 'parallel',
  execute: ({ path }) => (log.push(path), `contents of ${path}`),
});
const SQL_GRAMMAR = { type: 'grammar', syntax: 'regex', definition: '^SELECT .+$' } as const;
const custom = openAICustomTools([applyPatch, { tool: runSql, format: SQL_GRAMMAR }]);
const pipeline = createPipeline({ tools: [applyPatch, runSql, readFile] });

/** A patch with everything JSON text would mangle: quotes, backslashes, newlines, and JSON itself. */
const PATCH = '--- a/x.json\n+++ b/x.json\n@@ -1 +1 @@\n-{"a": 1}\n+{"a": "\\"2\\""}\n';

const customCall = (id: string | undefined, callId: string, name: string, input: string): ResponseCustomToolCall => ({
  type: 'custom_tool_call',
  ...(id === undefined ? {} : { id }),
  call_id: callId,
  name,
  input,
});

/** A response in which the model calls apply_patch (input in two deltas) and then read_file. */
function patchThenRead(): ResponseStreamEvent[] {
  const patch = customCall('ctc_1', 'call_patch', 'apply_patch', PATCH);
  const read = functionCall('fc_2', 'call_read', 'read_file', '{"path":"x.json"}');
  const events: Unnumbered[] = [
    { type: 'response.created', response: response('in_progress') },
    { type: 'response.output_item.added', output_index: 0, item: { ...patch, input: '' } },
    { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: PATCH.slice(0, 20) },
    { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: PATCH.slice(20) },
    { type: 'response.custom_tool_call_input.done', item_id: 'ctc_1', output_index: 0, input: PATCH },
    { type: 'response.output_item.done', output_index: 0, item: patch },
    { type: 'response.output_item.added', output_index: 1, item: { ...read, arguments: '', status: 'in_progress' } },
    { type: 'response.function_call_arguments.done', item_id: 'fc_2', output_index: 1, name: 'read_file', arguments: read.arguments },
    { type: 'response.output_item.done', output_index: 1, item: read },
    { type: 'response.completed', response: response('completed', [patch, read]) },
  ];
  return sequence(events);
}

describe('openAICustomTools: one declaration of the free-form tools', () => {
  it('names the tools in order, with their formats', () => {
    expect(custom.names).toEqual(['apply_patch', 'run_sql']);
    expect(custom.has('apply_patch')).toBe(true);
    expect(custom.has('read_file')).toBe(false);
    expect(custom.format('apply_patch')).toBeUndefined();
    expect(custom.format('run_sql')).toEqual(SQL_GRAMMAR);
    expect(Object.isFrozen(custom)).toBe(true);
  });

  it.each([
    ['not an array', 'apply_patch', 'tools'],
    ['an entry that is not a tool', ['apply_patch'], 'tools[0]'],
    ['a tool whose input is not a string schema', [readFile], 'tools[0].tool.input'],
    ['a malformed format', [{ tool: applyPatch, format: { type: 'grammar', syntax: 'ebnf', definition: 'x' } }], 'tools[0].format'],
    ['a name declared twice', [applyPatch, { tool: applyPatch }], 'tools[1]'],
  ])('rejects %s eagerly, with a ConfigError naming the option', (_, tools, option) => {
    const attempt = () => openAICustomTools(tools as never);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(expect.objectContaining({ code: 'invalid_config', where: 'openAICustomTools', option }));
  });

  it('the helpers reject a `custom` option that openAICustomTools did not make', () => {
    const fake = { names: ['apply_patch'], has: () => true, format: () => undefined } as unknown as OpenAICustomTools;
    expect(() => toOpenAIResponsesTools(pipeline, { custom: fake })).toThrow(expect.objectContaining({ option: 'options.custom' }));
    expect(() => fromOpenAIResponsesStream(new Subject<ResponseStreamEvent>(), { custom: fake })).toThrow(
      expect.objectContaining({ where: 'fromOpenAIResponsesStream', option: 'options.custom' }),
    );
    expect(() => toOpenAIResponsesInput([], { custom: fake })).toThrow(ConfigError);
  });
});

describe('toOpenAIResponsesTools with free-form tools', () => {
  it('offers the declared tools as { type: custom, name, description, format } and the others as functions', () => {
    const tools = toOpenAIResponsesTools(pipeline, { custom });
    expect(tools).toEqual([
      { type: 'custom', name: 'apply_patch', description: 'Apply a unified diff' },
      { type: 'custom', name: 'run_sql', description: 'Run a read-only query', format: SQL_GRAMMAR },
      { type: 'function', name: 'read_file', description: 'Read a file', parameters: expect.any(Object), strict: false },
    ]);
    expectTypeOf(tools).toEqualTypeOf<(FunctionTool | CustomTool)[]>();
    expectTypeOf(tools).toMatchTypeOf<Tool[]>();
    // Without the option: unchanged, and typed as before.
    expectTypeOf(toOpenAIResponsesTools(pipeline)).toEqualTypeOf<FunctionTool[]>();
    expect(toOpenAIResponsesTools(pipeline).map((tool) => tool.type)).toEqual(['function', 'function', 'function']);
  });

  it('a declared tool the restrictions hide is not offered', () => {
    const restricted = createPipeline({ tools: [applyPatch, readFile], restrictions: new RestrictionSet([{ scope: 'host', deny: ['apply_patch'] }]) });
    expect(toOpenAIResponsesTools(restricted, { custom }).map((tool) => tool.name)).toEqual(['read_file']);
  });

  it('rejects a declared name that is, in the source, a tool without a string input', () => {
    const impostor = defineTool({ name: 'apply_patch', description: 'x', input: z.object({}), execute: () => 'x' });
    expect(() => toOpenAIResponsesTools([impostor], { custom })).toThrow(expect.objectContaining({ where: 'toOpenAIResponsesTools' }));
  });
});

describe('fromOpenAIResponsesStream with free-form tools', () => {
  it('emits a declared custom_tool_call at its input.done, with the JSON encoding of the text as args', () => {
    const source = new Subject<ResponseStreamEvent>();
    const seen: ToolCall[] = [];
    fromOpenAIResponsesStream(source, { custom }).subscribe((call) => seen.push(call));
    const events = patchThenRead();
    for (const event of events.slice(0, 4)) source.next(event);
    expect(seen).toEqual([]);
    source.next(events[4]!); // response.custom_tool_call_input.done
    expect(seen.map(withoutTurn)).toEqual([{ id: 'call_patch', name: 'apply_patch', args: JSON.stringify(PATCH) }]);
  });

  it('through the SDK parser and a pipeline: the body gets the text exactly as the model wrote it', async () => {
    log.length = 0;
    const results = await pipeline.run(fromOpenAIResponsesStream(sdkStream<ResponseStreamEvent>(toSSE(patchThenRead())), { custom }));
    expect(results.map((r) => [r.id, r.status, r.content])).toEqual([
      ['call_patch', 'ok', 'applied'],
      ['call_read', 'ok', 'contents of x.json'],
    ]);
    expect(log).toEqual([PATCH, 'x.json']);
    expect(results[0]?.args).toBe(PATCH);
  });

  it('text that is itself JSON stays the text (a string), never parsed', async () => {
    log.length = 0;
    const source = new Subject<ResponseStreamEvent>();
    const run = pipeline.run(fromOpenAIResponsesStream(source, { custom }));
    source.next({ type: 'response.output_item.done', output_index: 0, item: customCall('ctc_1', 'call_1', 'apply_patch', '{"a":1}'), sequence_number: 0 });
    source.complete();
    expect((await run).map((r) => [r.status, r.args])).toEqual([['ok', '{"a":1}']]);
    expect(log).toEqual(['{"a":1}']);
  });

  it("validates the text with the tool's schema, like any input", async () => {
    const source = new Subject<ResponseStreamEvent>();
    const run = pipeline.run(fromOpenAIResponsesStream(source, { custom }));
    source.next({ type: 'response.output_item.done', output_index: 0, item: customCall('ctc_1', 'call_1', 'run_sql', 'DROP TABLE x'), sequence_number: 0 });
    source.complete();
    expect((await run).map((r) => [r.status, r.error?.code])).toEqual([['error', 'invalid_args']]);
  });

  it('a custom_tool_call of an undeclared name is a server’s own: ignored; and without the option, all are', async () => {
    const events = sequence([
      { type: 'response.output_item.added', output_index: 0, item: customCall('ctc_x', 'xs_call_1', 'x_keyword_search', '') },
      { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_x', output_index: 0, delta: '{"query":"x"}' },
      { type: 'response.custom_tool_call_input.done', item_id: 'ctc_x', output_index: 0, input: '{"query":"x"}' },
      { type: 'response.output_item.done', output_index: 0, item: customCall('ctc_x', 'xs_call_1', 'x_keyword_search', '{"query":"x"}') },
      { type: 'response.completed', response: response('completed') },
    ]);
    const collect = (options?: { custom: OpenAICustomTools }) => {
      const source = new Subject<ResponseStreamEvent>();
      const calls = firstValueFrom(fromOpenAIResponsesStream(source, options).pipe(toArray()));
      for (const event of events) source.next(event);
      return calls;
    };
    expect(await collect({ custom })).toEqual([]);
    expect(await collect()).toEqual([]);
    expect(await firstValueFrom(fromOpenAIResponsesStream(sdkStream<ResponseStreamEvent>(toSSE(patchThenRead()))).pipe(dropTurns(), toArray()))).toEqual([
      { id: 'call_read', name: 'read_file', args: '{"path":"x.json"}' },
    ]);
  });

  it('a free-form call cut off by the response ending incomplete gets incomplete_args with its text so far', async () => {
    log.length = 0;
    const source = new Subject<ResponseStreamEvent>();
    const emitted: ToolCall[] = [];
    const run = pipeline.run(fromOpenAIResponsesStream(source, { custom }).pipe(tap((call) => emitted.push(call))));
    const events = sequence([
      { type: 'response.output_item.added', output_index: 0, item: customCall('ctc_1', 'call_1', 'apply_patch', '') },
      { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: '--- a/x' },
      { type: 'response.incomplete', response: response('incomplete', [], { incomplete_details: { reason: 'max_output_tokens' } }) },
    ]);
    for (const event of events) source.next(event);
    const results = await run;
    expect(results.map((r) => [r.status, r.error?.code])).toEqual([['error', 'incomplete_args']]);
    expect(results[0]?.error).toMatchObject({ reason: 'max_tokens' });
    expect(emitted[0]?.args).toEqual(new IncompleteArguments('max_tokens', '--- a/x'));
    expect(log).toEqual([]);
  });
});

describe('toOpenAIResponsesInput with free-form tools', () => {
  it('answers the declared tools with custom_tool_call_output, the others with function_call_output', async () => {
    const results = await pipeline.run(fromOpenAIResponsesStream(sdkStream<ResponseStreamEvent>(toSSE(patchThenRead())), { custom }));
    const input = toOpenAIResponsesInput(results, { custom });
    expect(input).toEqual([
      { type: 'custom_tool_call_output', call_id: 'call_patch', output: 'applied' },
      { type: 'function_call_output', call_id: 'call_read', output: 'contents of x.json' },
    ]);
    expectTypeOf(input).toEqualTypeOf<(ResponseInputItem.FunctionCallOutput | ResponseCustomToolCallOutput)[]>();
    expectTypeOf(input).toMatchTypeOf<ResponseInputItem[]>();
    expectTypeOf(toOpenAIResponsesInput(results)).toEqualTypeOf<ResponseInputItem.FunctionCallOutput[]>();
  });

  it('with the real SDK client: the request offers the custom tool, the call runs, finalResponse() resolves', async () => {
    log.length = 0;
    const requests: unknown[] = [];
    const fetch = async (_url: string | URL | Request, init?: RequestInit) => {
      requests.push(JSON.parse(String(init?.body)));
      return new Response(toSSE(patchThenRead()), { headers: { 'content-type': 'text/event-stream' } });
    };
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://openai.test/v1', fetch, maxRetries: 0 });
    const tools = toOpenAIResponsesTools(pipeline, { custom });
    const stream = client.responses.stream({ model: 'gpt-5', input: 'Fix x.json', tools });
    const results = await pipeline.run(fromOpenAIResponsesStream(stream, { custom }));
    const final = await stream.finalResponse();
    expect((requests[0] as { tools: unknown }).tools).toEqual(tools);
    expect(log).toEqual([PATCH, 'x.json']);
    // The next turn answers each call with the item type its call had.
    const answered = toOpenAIResponsesInput(results, { custom }).map((item) => [item.type, item.call_id]);
    const asked = final.output.flatMap((item) => (item.type === 'custom_tool_call' || item.type === 'function_call' ? [[item.type, item.call_id]] : []));
    expect(answered).toEqual(asked.map(([type, id]) => [`${type}_output`, id]));
  });
});

const XAI = `${CORPUS_DIR}vercel-xai-x-search-custom.jsonl`;
describe.skipIf(!existsSync(XAI))(skippedBecause('the recorded xAI stream (vercel-xai-x-search-custom)', existsSync(XAI) ? undefined : `no recording at ${XAI}`), () => {
  const recorded = (): ResponseStreamEvent[] =>
    existsSync(`${CORPUS_DIR}vercel-xai-x-search-custom.jsonl`)
      ? readFileSync(`${CORPUS_DIR}vercel-xai-x-search-custom.jsonl`, 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as ResponseStreamEvent)
      : [];
  const collect = async (options?: { custom: OpenAICustomTools }) => {
    async function* events() {
      yield* recorded();
    }
    return firstValueFrom(fromOpenAIResponsesStream(events(), options).pipe(toArray()));
  };

  it('its custom_tool_calls are xAI’s own searches: with no free-form tool of those names, nothing is emitted', async () => {
    expect(await collect()).toEqual([]);
    expect(await collect({ custom })).toEqual([]);
  });

  it('declared free-form (only to show the opt-in reads a real stream), they come out with their text', async () => {
    const tool = (name: string) => defineTool({ name, description: name, input: z.string(), execute: () => '' });
    const calls = await collect({ custom: openAICustomTools([tool('x_keyword_search'), tool('view_x_video')]) });
    expect(calls.map((call) => [call.id, call.name, JSON.parse(call.args as string) as unknown])).toEqual([
      ['xs_call_24148162', 'x_keyword_search', '{"query":"from:xai filter:media","limit":20,"mode":"Latest"}'],
      ['xs_call_14963218', 'view_x_video', '{"video_url":"https://video.twimg.com/amplify_video/1991284765027364866/vid/avc1/468x270/kRkbodV96jk4PmbG.mp4"}'],
    ]);
  });
});
