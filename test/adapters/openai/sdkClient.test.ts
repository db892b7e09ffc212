import { readFile } from 'node:fs/promises';
import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  fromOpenAIChatStream,
  fromOpenAIResponsesStream,
  runOpenAIChatTurn,
  toOpenAIChatToolMessages,
  toOpenAIChatTools,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
} from '../../../src/adapters/openai/index.js';
import { createPipeline, defineTool } from '../../../src/index.js';
import { functionCall, outline, response, sequence, toSSE } from './helpers.js';

// The real SDK client, its request and stream helpers, over a stub `fetch` that answers with SSE text.
// The body stays open a little after the last event, as a network response does.

const CHAT_SSE = await readFile(
  new URL('../../../../shared/fixtures/streams/openai-chat-gpt4o-parallel-tool-calls.sse.txt', import.meta.url),
  'utf8',
);

function clientAnswering(sse: string, holdOpenMs = 20): { client: OpenAI; requests: unknown[] } {
  const requests: unknown[] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    requests.push(JSON.parse(String(init?.body)));
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(sse));
        await new Promise((resolve) => setTimeout(resolve, holdOpenMs));
        controller.close();
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  return { client: new OpenAI({ apiKey: 'sk-test', baseURL: 'http://openai.test/v1', fetch, maxRetries: 0 }), requests };
}

const weather = defineTool({
  name: 'GetWeatherArgs',
  description: 'Current weather in a city',
  input: z.object({ city: z.string(), country: z.string(), units: z.enum(['c', 'f']) }),
  mode: 'parallel',
  execute: ({ city }) => `${city}: 12°C`,
});
const stockPrice = defineTool({
  name: 'get_stock_price',
  description: 'Latest price of a stock',
  input: z.object({ ticker: z.string(), exchange: z.string() }),
  mode: 'parallel',
  execute: ({ ticker }) => `${ticker}: 227.52 USD`,
});
const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather',
  input: z.object({ location: z.string() }),
  mode: 'parallel',
  execute: ({ location }) => `${location}: 18°C`,
});

describe('with the real SDK client', () => {
  /** The raw Stream of chat.completions.create({ stream: true }) over the recorded gpt-4o response. */
  const rawChatStream = async () => {
    const { client } = clientAnswering(CHAT_SSE);
    const pipeline = createPipeline({ tools: [weather, stockPrice] });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Weather in Edinburgh and the AAPL price?' }],
      tools: toOpenAIChatTools(pipeline),
      stream: true,
    });
    return { pipeline, stream };
  };

  it('chat.completions.stream(): tools offered, calls run, finalMessage() still resolves', async () => {
    const { client, requests } = clientAnswering(CHAT_SSE);
    const pipeline = createPipeline({ tools: [weather, stockPrice] });
    const stream = client.chat.completions.stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Weather in Edinburgh and the AAPL price?' }],
      tools: toOpenAIChatTools(pipeline),
    });
    const results = await pipeline.run(fromOpenAIChatStream(stream));
    const assistant = await stream.finalMessage();

    expect(outline(results)).toEqual([
      ['call_JMW1whyEaYG438VE1OIflxA2', 'ok', undefined],
      ['call_DNYTawLBoN8fj3KN6qU9N1Ou', 'ok', undefined],
    ]);
    expect(assistant.tool_calls?.map((c) => c.id)).toEqual(toOpenAIChatToolMessages(results).map((m) => m.tool_call_id));
    expect((requests[0] as { tools: unknown }).tools).toEqual(toOpenAIChatTools(pipeline));
  });

  it('chat.completions.create({ stream: true }): the raw Stream', async () => {
    const { pipeline, stream } = await rawChatStream();
    const results = await pipeline.run(fromOpenAIChatStream(stream));
    expect(results.map((r) => r.content)).toEqual(['Edinburgh: 12°C', 'AAPL: 227.52 USD']);
  });

  it('runOpenAIChatTurn over the raw create({ stream: true }) stream: read once, for the calls and the assistant message', async () => {
    const { pipeline, stream } = await rawChatStream();

    const turn = await runOpenAIChatTurn(pipeline, stream);

    expect(turn.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_JMW1whyEaYG438VE1OIflxA2', type: 'function', function: { name: 'GetWeatherArgs', arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}' } },
        { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', type: 'function', function: { name: 'get_stock_price', arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' } },
      ],
    });
    expect(turn.toolMessages).toEqual([
      { role: 'tool', tool_call_id: 'call_JMW1whyEaYG438VE1OIflxA2', content: 'Edinburgh: 12°C' },
      { role: 'tool', tool_call_id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', content: 'AAPL: 227.52 USD' },
    ]);
    expect(turn.messages).toEqual([turn.message, ...turn.toolMessages]);
    expect(turn).toMatchObject({ finishReason: 'tool_calls', done: false, text: '' });
  });

  const call = functionCall('fc_1', 'call_1', 'get_weather', '{"location":"Paris"}');
  const events: ResponseStreamEvent[] = sequence([
    { type: 'response.created', response: response('in_progress') },
    { type: 'response.output_item.added', output_index: 0, item: { ...call, arguments: '', status: 'in_progress' } },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: '{"location":' },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: '"Paris"}' },
    { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 0, name: 'get_weather', arguments: call.arguments },
    { type: 'response.output_item.done', output_index: 0, item: call },
    { type: 'response.completed', response: response('completed', [call]) },
  ]);

  it('responses.stream(): calls run and finalResponse() still resolves (the helper is not aborted at response.completed)', async () => {
    const { client, requests } = clientAnswering(toSSE(events));
    const pipeline = createPipeline({ tools: [getWeather] });
    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'Weather in Paris?', tools: toOpenAIResponsesTools(pipeline) });
    const results = await pipeline.run(fromOpenAIResponsesStream(stream));
    const final = await stream.finalResponse();

    expect(toOpenAIResponsesInput(results)).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: 'Paris: 18°C' }]);
    expect(final.status).toBe('completed');
    expect(final.output).toMatchObject([call]);
    expect((requests[0] as { tools: unknown }).tools).toEqual(toOpenAIResponsesTools(pipeline));
  });

  it('responses.create({ stream: true }): the raw Stream', async () => {
    const { client } = clientAnswering(toSSE(events));
    const pipeline = createPipeline({ tools: [getWeather] });
    const stream = await client.responses.create({ model: 'gpt-4.1', input: 'Weather in Paris?', tools: toOpenAIResponsesTools(pipeline), stream: true });
    const results = await pipeline.run(fromOpenAIResponsesStream(stream));
    expect(results.map((r) => r.content)).toEqual(['Paris: 18°C']);
  });
});
