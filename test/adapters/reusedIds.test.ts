import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { concat } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromOpenAIChatStream, fromOpenAIResponsesStream } from '../../src/adapters/openai/index.js';
import { calls, finish, functionCall, outline, recordingTools, response, sdkStream, sequence, toSSE } from './openai/helpers.js';

// Every adapter answers a call id once per model response (a repeat in the same response is the same
// call) and answers a call of a later response that reuses an id (in the same run: `duplicate_id`),
// never dropping it. Kimi K2 behind a router numbers its calls per response (`functions.add:0`), so a
// source carrying two responses reuses ids. The Anthropic and AI SDK adapters have their own files
// (anthropic/repeatedToolUse.test.ts, ai-sdk/reusedIds.test.ts).

/** Chat Completions chunks as the API streams them, read by the SDK's own SSE parser. */
const chatSSE = (chunks: readonly ChatCompletionChunk[]) => sdkStream<ChatCompletionChunk>(`${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`);

/** One completion: one chunk per call (id, name and arguments whole), then its finish reason. */
const completion = (id: string, callsOf: readonly [callId: string, path: string][]): ChatCompletionChunk[] => [
  ...callsOf.map(([callId, path], index) => ({
    ...calls([{ index, id: callId, type: 'function' as const, function: { name: 'read_file', arguments: JSON.stringify({ path }) } }]),
    id,
  })),
  { ...finish('tool_calls'), id },
];

/** One Responses response with these function calls, each added then done. */
const responseEvents = (id: string, callsOf: readonly [callId: string, path: string][]) => {
  const items = callsOf.map(([callId, path], index) => functionCall(`fc_${id}_${index}`, callId, 'read_file', JSON.stringify({ path })));
  return sequence([
    { type: 'response.created', response: { ...response('in_progress'), id } },
    ...items.flatMap((item, output_index) => [
      { type: 'response.output_item.added' as const, output_index, item: { ...item, arguments: '', status: 'in_progress' as const } },
      { type: 'response.output_item.done' as const, output_index, item },
    ]),
    { type: 'response.completed', response: { ...response('completed', items), id } },
  ]);
};

describe('OpenAI Chat Completions: a call id once per completion, a reused one answered', () => {
  it('a later completion that reuses an id: its call is answered duplicate_id, not dropped', async () => {
    const { ran, pipeline } = recordingTools();
    const source = chatSSE([...completion('chatcmpl-1', [['functions.read_file:0', 'a']]), ...completion('chatcmpl-2', [['functions.read_file:0', 'b']])]);
    const results = await pipeline.run(fromOpenAIChatStream(source));
    expect(outline(results)).toEqual([
      ['functions.read_file:0', 'ok', undefined],
      ['functions.read_file:0', 'error', 'duplicate_id'],
    ]);
    expect(results.map((r) => r.turn)).toEqual(['chatcmpl-1', 'chatcmpl-2']);
    expect(ran).toEqual(['a']);
  });

  it('a late fragment of a call emitted in the same completion is still dropped', async () => {
    const { ran, pipeline } = recordingTools();
    const [a, b] = completion('chatcmpl-1', [['call_a', 'a'], ['call_b', 'b']]);
    const results = await pipeline.run(fromOpenAIChatStream(chatSSE([a!, b!, a!, { ...finish('tool_calls'), id: 'chatcmpl-1' }])));
    expect(outline(results)).toEqual([
      ['call_a', 'ok', undefined],
      ['call_b', 'ok', undefined],
    ]);
    expect(ran).toEqual(['a', 'b']);
  });
});

describe('OpenAI Responses: a call id once per response, a reused one answered', () => {
  it('a later response that reuses a call_id, in the same run: its call is answered duplicate_id, not dropped', async () => {
    // One Observable per response (it completes at `response.completed`): two responses in one run are two sources, one after the other.
    const { ran, pipeline } = recordingTools();
    const responses = [responseEvents('resp_1', [['call_0', 'a']]), responseEvents('resp_2', [['call_0', 'b']])];
    const results = await pipeline.run(concat(...responses.map((events) => fromOpenAIResponsesStream(sdkStream<ResponseStreamEvent>(toSSE(events))))));
    expect(outline(results)).toEqual([
      ['call_0', 'ok', undefined],
      ['call_0', 'error', 'duplicate_id'],
    ]);
    expect(results.map((r) => r.turn)).toEqual(['resp_1', 'resp_2']);
    expect(ran).toEqual(['a']);
  });

  it('the same call item done twice in one response is one call', async () => {
    const { ran, pipeline } = recordingTools();
    const events = responseEvents('resp_1', [['call_0', 'a']]);
    const done = events.find((event) => event.type === 'response.output_item.done')!;
    const results = await pipeline.run(fromOpenAIResponsesStream(sdkStream<ResponseStreamEvent>(toSSE([...events.slice(0, -1), done, events.at(-1)!]))));
    expect(outline(results)).toEqual([['call_0', 'ok', undefined]]);
    expect(ran).toEqual(['a']);
  });
});
