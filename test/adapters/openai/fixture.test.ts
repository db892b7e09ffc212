import { readFile } from 'node:fs/promises';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromOpenAIChatStream, toOpenAIChatToolMessages } from '../../../src/adapters/openai/index.js';
import { createPipeline, defineTool, type ToolCall } from '../../../src/index.js';
import { sdkStream } from './helpers.js';

// test/adapters/openai/ → up three to the repo folder, up one more to where `shared/` sits beside it.
const FIXTURE = new URL('../../../../shared/fixtures/streams/openai-chat-gpt4o-parallel-tool-calls.sse.txt', import.meta.url);
const sse = await readFile(FIXTURE, 'utf8');

const weather = defineTool({
  name: 'GetWeatherArgs',
  description: 'Current weather in a city',
  input: z.object({ city: z.string(), country: z.string().length(2), units: z.enum(['c', 'f']) }),
  mode: 'parallel',
  execute: ({ city, country, units }) => `${city}, ${country}: 12°${units.toUpperCase()}, light rain`,
});
const stockPrice = defineTool({
  name: 'get_stock_price',
  description: 'Latest price of a stock',
  input: z.object({ ticker: z.string(), exchange: z.string() }),
  mode: 'parallel',
  execute: ({ ticker, exchange }) => ({ ticker, exchange, price: 227.52, currency: 'USD' }),
});

const EXPECTED_CALLS: ToolCall[] = [
  // Each call's turn is the recorded completion's id.
  { id: 'call_JMW1whyEaYG438VE1OIflxA2', name: 'GetWeatherArgs', args: '{"city": "Edinburgh", "country": "GB", "units": "c"}', turn: 'chatcmpl-ABfwAwrNePHUgBBezonVC6MX3zd63' },
  { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', name: 'get_stock_price', args: '{"ticker": "AAPL", "exchange": "NASDAQ"}', turn: 'chatcmpl-ABfwAwrNePHUgBBezonVC6MX3zd63' },
];

describe('the recorded gpt-4o parallel tool calls stream, parsed by the SDK', () => {
  it('yields exactly the two calls, with their arguments whole', async () => {
    const calls = await firstValueFrom(fromOpenAIChatStream(sdkStream<ChatCompletionChunk>(sse)).pipe(toArray()));
    expect(calls).toEqual(EXPECTED_CALLS);
  });

  it('emits the first call when the second index appears, before the finish chunk', async () => {
    const log: string[] = [];
    async function* logged() {
      for await (const chunk of sdkStream<ChatCompletionChunk>(sse)) {
        const choice = chunk.choices[0];
        if (choice?.finish_reason) log.push(`finish:${choice.finish_reason}`);
        else if (choice?.delta.tool_calls?.[0]?.id !== undefined) log.push(`open:${choice.delta.tool_calls[0].index}`);
        else if (chunk.choices.length === 0) log.push('usage');
        yield chunk;
      }
    }
    await new Promise<void>((resolve, reject) =>
      fromOpenAIChatStream(logged()).subscribe({ next: (call) => log.push(`call:${call.id}`), error: reject, complete: resolve }),
    );
    expect(log).toEqual([
      'open:0',
      'open:1',
      'call:call_JMW1whyEaYG438VE1OIflxA2',
      'finish:tool_calls',
      'call:call_DNYTawLBoN8fj3KN6qU9N1Ou',
      'usage',
    ]);
  });

  it('runs through a real pipeline into exactly the tool messages OpenAI expects', async () => {
    const pipeline = createPipeline({ tools: [weather, stockPrice] });
    const results = await pipeline.run(fromOpenAIChatStream(sdkStream<ChatCompletionChunk>(sse)));

    expect(results.map((r) => [r.id, r.name, r.status, r.index])).toEqual([
      ['call_JMW1whyEaYG438VE1OIflxA2', 'GetWeatherArgs', 'ok', 0],
      ['call_DNYTawLBoN8fj3KN6qU9N1Ou', 'get_stock_price', 'ok', 1],
    ]);
    expect(results.map((r) => r.args)).toEqual([
      { city: 'Edinburgh', country: 'GB', units: 'c' },
      { ticker: 'AAPL', exchange: 'NASDAQ' },
    ]);
    expect(toOpenAIChatToolMessages(results)).toEqual([
      { role: 'tool', tool_call_id: 'call_JMW1whyEaYG438VE1OIflxA2', content: 'Edinburgh, GB: 12°C, light rain' },
      {
        role: 'tool',
        tool_call_id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou',
        content: '{"ticker":"AAPL","exchange":"NASDAQ","price":227.52,"currency":"USD"}',
      },
    ]);
  });

  it('with the SDK’s ChatCompletionStream helper: its final assistant message plus the tool messages form a valid next turn', async () => {
    // `client.chat.completions.stream(...)` gives this helper; it is an async iterable of the same chunks.
    const stream = ChatCompletionStream.fromReadableStream(sdkStream<ChatCompletionChunk>(sse).toReadableStream());
    const pipeline = createPipeline({ tools: [weather, stockPrice] });
    const results = await pipeline.run(fromOpenAIChatStream(stream));
    const assistant = await stream.finalMessage();

    const messages: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Weather in Edinburgh, and the AAPL price?' },
      assistant,
      ...toOpenAIChatToolMessages(results),
    ];
    // OpenAI's rule: a tool message for every tool_call_id of the assistant message, right after it.
    const asked = (assistant.tool_calls ?? []).map((call) => call.id);
    const answered = messages.slice(2).map((m) => (m.role === 'tool' ? m.tool_call_id : undefined));
    expect(asked).toEqual(EXPECTED_CALLS.map((c) => c.id));
    expect(answered).toEqual(asked);
  });
});
