import fc from 'fast-check';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { Observable } from 'rxjs';
import { z } from 'zod';
import { fromAnthropicStream, type AnthropicStreamEvent } from '../../src/adapters/anthropic/index.js';
import { fromOpenAIChatStream, fromOpenAIResponsesStream } from '../../src/adapters/openai/index.js';
import { defineTool, type ToolCall } from '../../src/index.js';
import { anthropicStreams, chatStreams, responsesStreams, type ModelStream, type ModelStreamOptions, type WireFormat } from '../../src/testing/index.js';

/** The arguments a well-behaved model sends each test tool (for `toolCalls`). */
export const args = {
  read_file: fc.record({ path: fc.string({ maxLength: 30 }) }),
  search: fc.record({ q: fc.string({ maxLength: 20 }), n: fc.nat({ max: 50 }) }),
  none: fc.constant({}),
};

/** The tools `args` is for: two parallel ones and an exclusive one without parameters. */
export const tools = [
  defineTool({ name: 'read_file', description: 'Read a file', input: z.object({ path: z.string() }), mode: 'parallel', execute: ({ path }) => `contents of ${path}` }),
  defineTool({ name: 'search', description: 'Search', input: z.object({ q: z.string(), n: z.number().int().nonnegative() }), mode: 'parallel', execute: ({ q }) => [q] }),
  defineTool({ name: 'none', description: 'No arguments', input: z.object({}), execute: () => 'done' }),
];

/** The stream arbitrary of each wire format. */
export const STREAMS: Record<WireFormat, (options: ModelStreamOptions) => fc.Arbitrary<ModelStream<unknown>>> = {
  anthropic: anthropicStreams,
  chat: chatStreams,
  responses: responsesStreams,
};

/** The adapter of the format over its events (an async iterable, as the SDK parser gives them, or an Observable). */
export function adapt(format: WireFormat, events: AsyncIterable<unknown> | Observable<unknown>): Observable<ToolCall> {
  switch (format) {
    case 'anthropic':
      return fromAnthropicStream(events as AsyncIterable<AnthropicStreamEvent>);
    case 'chat':
      return fromOpenAIChatStream(events as AsyncIterable<ChatCompletionChunk>);
    case 'responses':
      return fromOpenAIResponsesStream(events as AsyncIterable<ResponseStreamEvent>);
  }
}
