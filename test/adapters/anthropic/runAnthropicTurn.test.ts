import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { from } from 'rxjs';
import { beforeEach, describe, expect, it } from 'vitest';
import { runAnthropicTurn, type AnthropicStreamEvent } from '../../../src/adapters/anthropic/index.js';
import { createPipeline, SourceError } from '../../../src/index.js';
import { streamedResponse } from '../../../src/testing/index.js';
import { ev, message, now, ran, toolUse, weather } from './helpers.js';

// The recorded Claude 3.5 Sonnet stream, framed (see fixture.test.ts): a text block, two weather calls.
const FIXTURE = new URL('../../../../shared/fixtures/streams/anthropic-claude35-sonnet-parallel-tool-use.sse.txt', import.meta.url);
const framed = readFileSync(FIXTURE, 'utf8').replace(/^(data:.*)\n/gm, '$1\n\n');

const pipeline = createPipeline({ tools: [weather, now] });

beforeEach(() => {
  ran.length = 0;
});

describe('runAnthropicTurn', () => {
  it('through the real client: create({ stream: true }) is read once, for the calls and the assistant message alike', async () => {
    const requests: unknown[] = [];
    const fetch = async (_url: string | URL | Request, init?: RequestInit) => (requests.push(JSON.parse(String(init?.body))), streamedResponse(framed));
    const client = new Anthropic({ apiKey: 'test', baseURL: 'http://anthropic.test', fetch, maxRetries: 0 });
    const stream = await client.messages.create({ model: 'claude-3-5-sonnet-20241022', max_tokens: 1024, messages: [{ role: 'user', content: 'Weather?' }], stream: true });

    const turn = await runAnthropicTurn(pipeline, stream);

    const ids = ['toolu_01QRThyzKt6NibK3m1DjUTkE', 'toolu_015A1zQUwKw1YE3CYvRRUdXZ'];
    expect(turn.results.map((r) => [r.id, r.status, r.content])).toEqual([
      [ids[0], 'ok', 'London, UK: 15 °C'],
      [ids[1], 'ok', 'Paris, France: 18 °C'],
    ]);
    expect(turn.message).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: "I'll check the weather for both cities using Celsius units." },
        { type: 'tool_use', id: ids[0], name: 'weather', input: { location: 'London, UK', units: 'celsius' } },
        { type: 'tool_use', id: ids[1], name: 'weather', input: { location: 'Paris, France', units: 'celsius' } },
      ],
    });
    expect(turn.toolResults?.content.map((block) => block.tool_use_id)).toEqual(ids);
    expect(turn.messages).toEqual([turn.message, turn.toolResults]);
    expect(turn).toMatchObject({ stopReason: 'tool_use', done: false, text: "I'll check the weather for both cities using Celsius units." });
  });

  it('assembles the same message as the SDK\'s own accumulator (MessageStream.finalMessage)', async () => {
    const sdkStream = () => Stream.fromSSEResponse<Anthropic.RawMessageStreamEvent>(streamedResponse(framed), new AbortController());
    const official = await MessageStream.fromReadableStream(sdkStream().toReadableStream()).finalMessage();
    const turn = await runAnthropicTurn(pipeline, sdkStream());
    expect(turn.message.content).toEqual(official.content);
  });

  it('the last turn: no calls, no tool_result message (Anthropic rejects an empty one), done', async () => {
    const turn = await runAnthropicTurn(pipeline, from(message([ev.textStart(0), ev.text(0, 'All done.'), ev.stop(0)], 'end_turn')));
    expect(turn.results).toEqual([]);
    expect(turn.toolResults).toBeUndefined();
    expect(turn.messages).toEqual([{ role: 'assistant', content: [{ type: 'text', text: 'All done.' }] }]);
    expect(turn).toMatchObject({ done: true, text: 'All done.', stopReason: 'end_turn' });
  });

  it('leaves out text blocks that stayed empty (the API streams them and rejects them), and an empty message', async () => {
    const blocks = [ev.textStart(0), ev.stop(0), ...toolUse(1, 'toolu_1', 'now', ['']), ev.textStart(2), ev.stop(2)];
    const turn = await runAnthropicTurn(pipeline, from(message(blocks)));
    expect(turn.message.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'now', input: {} }]);

    const empty = await runAnthropicTurn(pipeline, from(message([ev.textStart(0), ev.stop(0)], 'end_turn')));
    expect(empty.messages).toEqual([]);
    expect(empty.done).toBe(true);
  });

  it('a call cut off by max_tokens is in the message (input {}) and answered, so the loop goes on', async () => {
    const events = message([ev.toolStart(0, 'toolu_cut', 'weather'), ev.json(0, '{"location": "Lon')], 'max_tokens');
    const turn = await runAnthropicTurn(pipeline, from(events));
    expect(turn.message.content).toEqual([{ type: 'tool_use', id: 'toolu_cut', name: 'weather', input: {} }]);
    expect(turn.toolResults?.content).toEqual([expect.objectContaining({ tool_use_id: 'toolu_cut', is_error: true })]);
    expect(turn.results[0]?.error?.code).toBe('incomplete_args');
    expect(turn).toMatchObject({ done: false, stopReason: 'max_tokens' });
    expect(ran).toEqual([]);
  });

  it('malformed JSON: that call gets its own invalid_json answer, the others run; the message keeps input {}', async () => {
    const blocks = [...toolUse(0, 'toolu_bad', 'weather', ['{"location": ']), ...toolUse(1, 'toolu_ok', 'now', ['{}'])];
    const turn = await runAnthropicTurn(pipeline, from(message(blocks)));
    expect(turn.results.map((r) => [r.id, r.status === 'ok' ? 'ok' : r.error.code])).toEqual([['toolu_bad', 'invalid_json'], ['toolu_ok', 'ok']]);
    expect(turn.message.content).toEqual([
      { type: 'tool_use', id: 'toolu_bad', name: 'weather', input: {} },
      { type: 'tool_use', id: 'toolu_ok', name: 'now', input: {} },
    ]);
  });

  it('thinking, signatures and citations are kept as streamed; server tool blocks too, and their calls are not run', async () => {
    const event = (value: Record<string, unknown>) => value as unknown as AnthropicStreamEvent;
    const blocks = [
      event({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      event({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }),
      event({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'search.' } }),
      event({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig==' } }),
      ev.stop(0),
      ev.serverToolStart(1, 'srvtoolu_1', 'web_search'),
      ev.json(1, '{"query": "weather"}'),
      ev.stop(1),
      event({ type: 'content_block_start', index: 2, content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] } }),
      ev.stop(2),
      ev.textStart(3),
      ev.text(3, 'Sunny'),
      event({ type: 'content_block_delta', index: 3, delta: { type: 'citations_delta', citation: { type: 'web_search_result_location', url: 'https://example.com', title: 'x', encrypted_index: 'e', cited_text: 'sunny' } } }),
      ev.stop(3),
    ];
    const turn = await runAnthropicTurn(pipeline, from(message(blocks, 'end_turn')));
    expect(turn.message.content).toEqual([
      { type: 'thinking', thinking: 'Let me search.', signature: 'sig==' },
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'weather' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
      { type: 'text', text: 'Sunny', citations: [expect.objectContaining({ cited_text: 'sunny' })] },
    ]);
    expect(turn.results).toEqual([]);
    expect(turn.done).toBe(true);
  });

  it('pause_turn: no calls, but not done (the assistant message goes back so the model can go on)', async () => {
    const turn = await runAnthropicTurn(pipeline, from(message([ev.textStart(0), ev.text(0, 'Searching…'), ev.stop(0)], 'pause_turn')));
    expect(turn).toMatchObject({ done: false, stopReason: 'pause_turn', messages: [turn.message] });
  });

  it('content outside a message is nobody\'s: neither run nor in the message', async () => {
    const events = [...toolUse(0, 'toolu_stray', 'now', ['{}']), ...message(toolUse(0, 'toolu_1', 'now', ['{}']))];
    const turn = await runAnthropicTurn(pipeline, from(events));
    expect(turn.results.map((r) => r.id)).toEqual(['toolu_1']);
    expect(turn.message.content.map((block) => (block as { id?: string }).id)).toEqual(['toolu_1']);
  });

  it('a stream that fails midway rejects with a SourceError holding every result', async () => {
    const events = [ev.messageStart(), ...toolUse(0, 'toolu_1', 'now', ['{}']), ev.error('overloaded_error', 'Overloaded')];
    const error: unknown = await runAnthropicTurn(pipeline, from(events)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect((error as SourceError).results.map((r) => [r.id, r.status])).toEqual([['toolu_1', 'ok']]);
  });
});
