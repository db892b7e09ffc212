import { readFileSync } from 'node:fs';
import { AnthropicError, type Anthropic } from '@anthropic-ai/sdk';
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { tap } from 'rxjs';
import { beforeEach, describe, expect, it } from 'vitest';
import { fromAnthropicStream, toAnthropicToolResults, type AnthropicStreamEvent } from '../../../src/adapters/anthropic/index.js';
import { createPipeline, SourceError, type ToolCall } from '../../../src/index.js';
import { streamedResponse } from '../../../src/testing/index.js';
import { ran, settle, weather } from './helpers.js';
import { withoutTurn } from '../withoutTurn.js';

// test/adapters/anthropic/ → the repository root is three levels up; shared/ sits beside it.
const FIXTURE = new URL('../../../../shared/fixtures/streams/anthropic-claude35-sonnet-parallel-tool-use.sse.txt', import.meta.url);
const recorded = readFileSync(FIXTURE, 'utf8');

/**
 * The recording has no blank line between its events. In SSE a blank line is what dispatches an
 * event, so a conforming parser (the SDK's included) reads the whole file as one event that is never
 * dispatched. `framed` restores the blank line after each `data:` line and changes nothing else.
 */
const framed = recorded.replace(/^(data:.*)\n/gm, '$1\n\n');

/** The SDK's own SSE parser over the text: what `client.messages.create({ stream: true })` returns. */
const sdkStream = (text: string) => Stream.fromSSEResponse<Anthropic.RawMessageStreamEvent>(streamedResponse(text), new AbortController());

const LONDON = { id: 'toolu_01QRThyzKt6NibK3m1DjUTkE', name: 'weather' } as const;
const PARIS = { id: 'toolu_015A1zQUwKw1YE3CYvRRUdXZ', name: 'weather' } as const;
// Each call's turn is the recorded message's id.
const EXPECTED_CALLS: ToolCall[] = [
  { ...LONDON, args: '{"location": "London, UK", "units": "celsius"}', turn: 'msg_01HGJRN5feUfoHAW2KTnFc3d' },
  { ...PARIS, args: '{"location": "Paris, France", "units": "celsius"}', turn: 'msg_01HGJRN5feUfoHAW2KTnFc3d' },
];
const EXPECTED_MESSAGE: Anthropic.MessageParam = {
  role: 'user',
  content: [
    { type: 'tool_result', tool_use_id: LONDON.id, content: 'London, UK: 15 °C', is_error: false },
    { type: 'tool_result', tool_use_id: PARIS.id, content: 'Paris, France: 18 °C', is_error: false },
  ],
};

beforeEach(() => {
  ran.length = 0;
});

describe('the recorded Claude 3.5 Sonnet stream (two parallel weather calls)', () => {
  it('as recorded, without event separators, gives the SDK parser no events at all (and no error)', async () => {
    expect(recorded).not.toContain('\n\n');
    const events: unknown[] = [];
    for await (const event of sdkStream(recorded)) events.push(event);
    expect(events).toEqual([]);
    // so the adapter sees an empty stream: no calls, a clean completion
    expect(await settle(fromAnthropicStream(sdkStream(recorded)))).toEqual({ values: [], error: undefined, completed: true });
  });

  it('framed: only the blank lines between events were added', () => {
    expect(framed.replace(/\n\n/g, '\n')).toBe(recorded);
    expect(framed.match(/^event: /gm)).toHaveLength(34);
  });

  it('through the SDK parser, the adapter and a real pipeline: the exact calls, results and tool_result message', async () => {
    const pipeline = createPipeline({ tools: [weather] });
    const calls: ToolCall[] = [];
    const results = await pipeline.run(fromAnthropicStream(sdkStream(framed)).pipe(tap((call) => calls.push(call))));

    expect(calls).toEqual(EXPECTED_CALLS);
    expect(results.map(({ id, name, index, status, args, content }) => ({ id, name, index, status, args, content }))).toEqual([
      { ...LONDON, index: 0, status: 'ok', args: { location: 'London, UK', units: 'celsius' }, content: 'London, UK: 15 °C' },
      { ...PARIS, index: 1, status: 'ok', args: { location: 'Paris, France', units: 'celsius' }, content: 'Paris, France: 18 °C' },
    ]);
    expect(ran).toEqual(['London, UK', 'Paris, France']);
    expect(toAnthropicToolResults(results)).toEqual(EXPECTED_MESSAGE);
  });

  it("agrees with the SDK's own accumulator (MessageStream), which the adapter can read directly", async () => {
    const stream = MessageStream.fromReadableStream(sdkStream(framed).toReadableStream());
    const pipeline = createPipeline({ tools: [weather] });
    const calls: ToolCall[] = [];
    const results = await pipeline.run(fromAnthropicStream(stream).pipe(tap((call) => calls.push(call))));
    const reply = await stream.finalMessage();

    expect(reply.stop_reason).toBe('tool_use');
    const toolUses = reply.content.flatMap((block) => (block.type === 'tool_use' ? [{ id: block.id, name: block.name, input: block.input }] : []));
    expect(calls.map(({ id, name, args }) => ({ id, name, input: JSON.parse(args as string) as unknown }))).toEqual(toolUses);

    // The next turn: one tool_result per tool_use, in one user message, nothing before them.
    const next = toAnthropicToolResults(results);
    expect(next).toEqual(EXPECTED_MESSAGE);
    expect(next.content.map((block) => block.tool_use_id)).toEqual(toolUses.map((block) => block.id));
    const history: Anthropic.MessageParam[] = [{ role: 'assistant', content: reply.content }, next];
    expect(history).toHaveLength(2);
  });

  it("read one data line at a time (as line-oriented parsers do), the recording's ping included: the same calls", async () => {
    const events = recorded
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice('data:'.length)) as AnthropicStreamEvent);
    expect(events.map((event) => event.type)).toContain('ping');
    const { values, error, completed } = await settle(fromAnthropicStream(toAsync(events)));
    // settle() leaves the turn out (the test above pins it).
    expect({ values, error, completed }).toEqual({ values: EXPECTED_CALLS.map(withoutTurn), error: undefined, completed: true });
  });
});

describe('the SDK readers, with a call whose JSON is bad', () => {
  /** An SSE body: London fine, then a call with bad JSON, then Paris fine. */
  const body = [
    { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
    ...[
      ['toolu_a', '{"location": "London, UK", "units": "celsius"}'],
      ['toolu_bad', '{"location": London, "units": "celsius"}'],
      ['toolu_b', '{"location": "Paris, France", "units": "celsius"}'],
    ].flatMap(([id, json], index) => [
      { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: 'weather', input: {} } },
      { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json } },
      { type: 'content_block_stop', index },
    ]),
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ]
    .map((data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`)
    .join('');

  it('the raw Stream (messages.create with stream: true): invalid_json for that call alone, the others run', async () => {
    const results = await createPipeline({ tools: [weather] }).run(fromAnthropicStream(sdkStream(body)));
    expect(results.map((r) => `${r.id} ${r.status === 'ok' ? r.content : r.error.code}`)).toEqual([
      'toolu_a London, UK: 15 °C',
      'toolu_bad invalid_json',
      'toolu_b Paris, France: 18 °C',
    ]);
  });

  it('MessageStream (messages.stream): the SDK parses the input at content_block_stop and fails the whole stream', async () => {
    const stream = MessageStream.fromReadableStream(sdkStream(body).toReadableStream());
    const failure = await createPipeline({ tools: [weather] })
      .run(fromAnthropicStream(stream))
      .then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(SourceError);
    const { results, cause } = failure as SourceError;
    expect(cause).toBeInstanceOf(AnthropicError);
    expect((cause as Error).message).toMatch(/not valid JSON/);
    expect(results.map((r) => `${r.id} ${r.status === 'ok' ? r.content : r.error.code}`)).toEqual(['toolu_a London, UK: 15 °C', 'toolu_bad incomplete_args']);
    expect(results[1]?.error).toMatchObject({ reason: 'stream_error' });
    expect(ran).toEqual(['London, UK']);
  });
});

async function* toAsync<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}
