import { APIError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { scriptedStream, streamedResponse, TestingOptionError, toSSE } from '../../src/testing/index.js';

async function collect(source: AsyncIterable<unknown>): Promise<unknown[]> {
  const items: unknown[] = [];
  for await (const item of source) items.push(item);
  return items;
}

const start = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: {} } };
const text = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'é💡 — multi-byte, split by small chunks' } };

describe('toSSE', () => {
  it('writes event lines for Anthropic and Responses, and [DONE] after a Chat Completions body', () => {
    expect(toSSE('anthropic', [{ type: 'message_stop' }, 42])).toBe('event: message_stop\ndata: {"type":"message_stop"}\n\ndata: 42\n\n');
    expect(toSSE('responses', [{ type: 'response.created' }])).toBe('event: response.created\ndata: {"type":"response.created"}\n\n');
    expect(toSSE('chat', [{ type: 'x', choices: [] }])).toBe('data: {"type":"x","choices":[]}\n\ndata: [DONE]\n\n');
    expect(() => toSSE('gemini' as never, [])).toThrow(TestingOptionError);
  });
});

describe('streamedResponse', () => {
  it('delivers the body in chunks of chunkSize bytes', async () => {
    const response = streamedResponse('abcdefghij', 4);
    const chunks = (await collect(response.body! as unknown as AsyncIterable<Uint8Array>)) as Uint8Array[];
    expect(chunks.map((chunk) => new TextDecoder().decode(chunk))).toEqual(['abcd', 'efgh', 'ij']);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(() => streamedResponse('x', 0)).toThrow(/streamedResponse: `chunkSize` must be a positive integer/);
  });
});

describe('scriptedStream', () => {
  it("yields what the Anthropic SDK's parser yields: pings and events without a type dropped", async () => {
    const events = await collect(scriptedStream('anthropic', [start, { type: 'ping' }, text, { no: 'type' }, { type: 'message_stop' }], { chunkSize: 1 }));
    expect(events).toEqual([start, text, { type: 'message_stop' }]);
  });

  it("throws what the SDK throws for an error event, and parses anew for each iteration", async () => {
    const stream = scriptedStream('anthropic', [start, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
    for (let i = 0; i < 2; i++) {
      const seen: unknown[] = [];
      const failure = await (async () => {
        for await (const event of stream) seen.push(event);
      })().catch((error: unknown) => error);
      expect(seen).toEqual([start]);
      expect(failure).toBeInstanceOf(APIError);
    }
  });

  it('reads a Chat Completions body to [DONE], and throws for a chunk with an error field, as the openai SDK does', async () => {
    const chunk = { id: 'c', choices: [{ index: 0, delta: { content: 'é💡' } }] };
    expect(await collect(scriptedStream('chat', [chunk, chunk], { chunkSize: 3 }))).toEqual([chunk, chunk]);
    await expect(collect(scriptedStream('chat', [chunk, { error: { message: 'tool_use_failed' } }]))).rejects.toThrow(/tool_use_failed/);
    expect(await collect(scriptedStream('responses', [{ type: 'response.created', sequence_number: 0 }]))).toEqual([{ type: 'response.created', sequence_number: 0 }]);
  });

  it('refuses a chunkSize that is not a positive integer, and an unknown format', () => {
    expect(() => scriptedStream('chat', [], { chunkSize: 0.5 })).toThrow(/scriptedStream: `chunkSize` must be a positive integer/);
    expect(() => scriptedStream('gemini' as never, [])).toThrow(TestingOptionError);
  });
});
