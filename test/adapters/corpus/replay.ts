import { Stream as AnthropicStream } from '@anthropic-ai/sdk/streaming';
import { Stream as OpenAIStream } from 'openai/streaming';
import type { Observable } from 'rxjs';
import { fromAnthropicStream, type AnthropicStreamEvent } from '../../../src/adapters/anthropic/index.js';
import { fromOpenAIChatStream, fromOpenAIResponsesStream } from '../../../src/adapters/openai/index.js';
import type { ToolCall } from '../../../src/index.js';
import { streamedResponse } from '../../../src/testing/index.js';
import type { RecordedResponse, WireFormat } from './recordings.js';
import type { Ending } from './expected.js';

/** The events of a response as the adapter is given them: through the SDK's SSE parser, or as recorded objects. */
export function parsed(format: WireFormat, response: RecordedResponse): AsyncIterable<unknown> {
  if (response.objects !== undefined) return fromArray(response.objects);
  const controller = new AbortController();
  return format === 'anthropic'
    ? AnthropicStream.fromSSEResponse<AnthropicStreamEvent>(streamedResponse(response.sse), controller)
    : OpenAIStream.fromSSEResponse<unknown>(streamedResponse(response.sse), controller);
}

/** Every event the parser yields, and whether it ended cleanly (the SDK throws on an `error` event). */
export async function collect(source: AsyncIterable<unknown>): Promise<{ events: unknown[]; ending: Ending }> {
  const events: unknown[] = [];
  try {
    for await (const event of source) events.push(event);
    return { events, ending: 'clean' };
  } catch {
    return { events, ending: 'error' };
  }
}

/**
 * The source, one event per macrotask, as a network delivers them; `delivered()` is the index of the
 * last event handed on (the number of events once the source has ended), so a consumer can note at
 * which event each call came out.
 */
export function paced(source: AsyncIterable<unknown>): { events: AsyncIterable<unknown>; delivered(): number } {
  let delivered = -1;
  async function* events() {
    let index = 0;
    try {
      for await (const event of source) {
        await new Promise((resolve) => setImmediate(resolve));
        delivered = index++;
        yield event;
      }
    } finally {
      delivered = index; // ended, or failed: what comes out now comes at the end
    }
  }
  return { events: events(), delivered: () => delivered };
}

/** The matching adapter over the events. */
export function adapt(format: WireFormat, events: AsyncIterable<unknown>): Observable<ToolCall> {
  switch (format) {
    case 'chat':
      return fromOpenAIChatStream(events as Parameters<typeof fromOpenAIChatStream>[0]);
    case 'responses':
      return fromOpenAIResponsesStream(events as Parameters<typeof fromOpenAIResponsesStream>[0]);
    case 'anthropic':
      return fromAnthropicStream(events as AsyncIterable<AnthropicStreamEvent>);
  }
}

async function* fromArray<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}
