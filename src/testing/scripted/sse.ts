import { TestingOptionError } from '../errors.js';

/**
 * The three wire formats toolstream's adapters read: OpenAI Chat Completions (`'chat'`), OpenAI
 * Responses (`'responses'`) and Anthropic Messages (`'anthropic'`).
 *
 * @example
 * ```ts
 * const format: WireFormat = 'responses';
 * ```
 */
export type WireFormat = 'chat' | 'responses' | 'anthropic';

const FORMATS: readonly WireFormat[] = ['chat', 'responses', 'anthropic'];

/**
 * Events as the provider's SSE body: each event a `data:` line of its JSON, blank-line separated,
 * with an `event:` line naming its `type` for the formats that have them (Anthropic, Responses), and
 * `data: [DONE]` at the end of a Chat Completions body. This is the text the official SDKs parse.
 *
 * @param format The wire format.
 * @param items The events (objects; anything JSON can hold is written as it is).
 *
 * @example
 * ```ts
 * toSSE('anthropic', [{ type: 'message_stop' }]); // 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
 * toSSE('chat', []); // 'data: [DONE]\n\n'
 * ```
 */
export function toSSE(format: WireFormat, items: readonly unknown[]): string {
  if (!FORMATS.includes(format)) throw new TestingOptionError('toSSE', 'format', "'chat', 'responses' or 'anthropic'", format);
  const body = items
    .map((item) => {
      const type = isRecord(item) && typeof item['type'] === 'string' ? item['type'] : undefined;
      const event = format !== 'chat' && type !== undefined ? `event: ${type}\n` : '';
      return `${event}data: ${JSON.stringify(item) ?? 'null'}\n\n`;
    })
    .join('');
  return format === 'chat' ? `${body}data: [DONE]\n\n` : body;
}

/**
 * An HTTP response whose SSE body arrives in chunks of `chunkSize` bytes, which split lines, events
 * and multi-byte characters as a network does: what the SDKs' `Stream.fromSSEResponse` and a client's
 * `fetch` option take.
 *
 * @param text The body (e.g. from {@link toSSE}).
 * @param chunkSize Bytes per chunk (a positive integer). @default 37
 * @throws {TestingOptionError} for a `chunkSize` that is not a positive integer.
 *
 * @example
 * ```ts
 * const client = new Anthropic({ apiKey: 'test', fetch: async () => streamedResponse(toSSE('anthropic', stream.events)) });
 * ```
 */
export function streamedResponse(text: string, chunkSize = 37): Response {
  if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new TestingOptionError('streamedResponse', 'chunkSize', 'a positive integer', chunkSize);
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, (offset += chunkSize)));
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
