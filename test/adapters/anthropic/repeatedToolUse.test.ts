import type Anthropic from '@anthropic-ai/sdk';
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import { beforeEach, describe, expect, it } from 'vitest';
import { fromAnthropicStream, runAnthropicTurn, type AnthropicTurn } from '../../../src/adapters/anthropic/index.js';
import { createPipeline } from '../../../src/index.js';
import { streamedResponse } from '../../../src/testing/index.js';
import { ran, settle, weather } from './helpers.js';

// A `tool_use` block the stream carries twice is one call: the assistant message must hold its id once
// and one `tool_result` must follow it (Anthropic rejects a history with a repeated `tool_use` id).

const pipeline = createPipeline({ tools: [weather] });
const LONDON = { location: 'London, UK', units: 'celsius' };
const PARIS = { location: 'Paris, France', units: 'celsius' };

beforeEach(() => {
  ran.length = 0;
});

type Event = Record<string, unknown> & { readonly type: string };

/** The events as the API sends them (`event:` and `data:` lines), read by the SDK's own SSE parser. */
const sdkStream = (events: readonly Event[]) =>
  Stream.fromSSEResponse<Anthropic.RawMessageStreamEvent>(
    streamedResponse(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('')),
    new AbortController(),
  );

const toolUse = (id: string, input: object) => ({ type: 'tool_use', id, name: 'weather', input });
const messageStart = (id: string, content: object[] = []): Event => ({
  type: 'message_start',
  message: { id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content, stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
});
const streamedBlock = (index: number, id: string, input: object): Event[] => [
  { type: 'content_block_start', index, content_block: toolUse(id, {}) },
  { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } },
  { type: 'content_block_stop', index },
];
const messageEnd: Event[] = [
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } },
  { type: 'message_stop' },
];

/** The `tool_use` ids of the assistant message, and the ids its `tool_result`s answer. */
const history = (turn: AnthropicTurn) => ({
  toolUses: turn.message.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])),
  toolResults: turn.toolResults?.content.map((block) => block.tool_use_id),
});

describe('a repeated tool_use is one call: run once, in the message once, answered once', () => {
  it('the same block in message_start and streamed', async () => {
    const events = [messageStart('msg_1', [toolUse('toolu_1', LONDON)]), ...streamedBlock(0, 'toolu_1', LONDON), ...messageEnd];
    const turn = await runAnthropicTurn(pipeline, sdkStream(events));
    expect(turn.results.map((r) => [r.id, r.status])).toEqual([['toolu_1', 'ok']]);
    expect(history(turn)).toEqual({ toolUses: ['toolu_1'], toolResults: ['toolu_1'] });
    expect(turn.message.content).toEqual([toolUse('toolu_1', LONDON)]);
    expect(ran).toEqual(['London, UK']);
  });

  it('a block replayed in its message, after another call', async () => {
    const events = [
      messageStart('msg_1'),
      ...streamedBlock(0, 'toolu_1', LONDON),
      ...streamedBlock(1, 'toolu_2', PARIS),
      ...streamedBlock(2, 'toolu_1', LONDON),
      ...messageEnd,
    ];
    const turn = await runAnthropicTurn(pipeline, sdkStream(events));
    expect(turn.results.map((r) => [r.id, r.status])).toEqual([['toolu_1', 'ok'], ['toolu_2', 'ok']]);
    expect(history(turn)).toEqual({ toolUses: ['toolu_1', 'toolu_2'], toolResults: ['toolu_1', 'toolu_2'] });
    expect(ran).toEqual(['London, UK', 'Paris, France']);
  });

  it('a whole message replayed (the same message id): its calls are the first ones', async () => {
    const message = [messageStart('msg_1'), ...streamedBlock(0, 'toolu_1', LONDON), ...messageEnd];
    const { values } = await settle(fromAnthropicStream(sdkStream([...message, ...message])));
    expect(values.map((call) => call.id)).toEqual(['toolu_1']);
    const turn = await runAnthropicTurn(pipeline, sdkStream([...message, ...message]));
    expect(history(turn)).toEqual({ toolUses: ['toolu_1'], toolResults: ['toolu_1'] });
    expect(ran).toEqual(['London, UK']);
  });

  it('a later message that reuses an id holds a new call: answered duplicate_id, never silently dropped', async () => {
    const events = [
      messageStart('msg_1'),
      ...streamedBlock(0, 'toolu_1', LONDON),
      ...messageEnd,
      messageStart('msg_2'),
      ...streamedBlock(0, 'toolu_1', PARIS),
      ...messageEnd,
    ];
    const results = await pipeline.run(fromAnthropicStream(sdkStream(events)));
    expect(results.map((r) => [r.id, r.turn, r.status, r.error?.code])).toEqual([
      ['toolu_1', 'msg_1', 'ok', undefined],
      ['toolu_1', 'msg_2', 'error', 'duplicate_id'],
    ]);
    // One response per runAnthropicTurn: the blocks of both messages are one message, holding the id once.
    const turn = await runAnthropicTurn(pipeline, sdkStream(events));
    expect(turn.results.map((r) => r.error?.code)).toEqual([undefined, 'duplicate_id']);
    expect(history(turn)).toEqual({ toolUses: ['toolu_1'], toolResults: ['toolu_1'] });
    expect(turn.toolResults?.content[0]).toMatchObject({ is_error: false, content: 'London, UK: 15 °C' });
  });

  it('blocks without a string id are not repeats of each other: each is answered invalid_call', async () => {
    const events = [messageStart('msg_1'), ...streamedBlock(0, undefined as unknown as string, LONDON), ...streamedBlock(1, undefined as unknown as string, PARIS), ...messageEnd];
    const results = await pipeline.run(fromAnthropicStream(sdkStream(events)));
    expect(results.map((r) => r.error?.code)).toEqual(['invalid_call', 'invalid_call']);
  });
});
