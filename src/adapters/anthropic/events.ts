import type { BetaRawMessageStreamEvent } from '@anthropic-ai/sdk/resources/beta/messages';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { ErrorResponse } from '@anthropic-ai/sdk/resources/shared';
import type { Observable } from 'rxjs';
import { isObject } from '../../util/validate.js';
import { brand } from '../../util/brand.js';

/**
 * A `ping` keep-alive, sent anywhere in an Anthropic stream. The official SDK drops pings before
 * yielding events; other SSE parsers may pass them on. It carries nothing and is ignored.
 *
 * @example
 * ```ts
 * const keepAlive: AnthropicPingEvent = { type: 'ping' };
 * ```
 */
export interface AnthropicPingEvent {
  readonly type: 'ping';
}

/**
 * An `error` event: the API failed midway through a stream (e.g. `overloaded_error`). The official SDK
 * throws it as an `APIError` instead of yielding it; a hand-rolled SSE parser may yield it as an event.
 * `fromAnthropicStream` treats it as the stream failing: see {@link AnthropicStreamError}.
 *
 * @example
 * ```ts
 * const failure: AnthropicErrorEvent = {
 *   type: 'error',
 *   error: { type: 'overloaded_error', message: 'Overloaded' },
 *   request_id: null,
 * };
 * ```
 */
export type AnthropicErrorEvent = ErrorResponse;

/**
 * One event of an Anthropic Messages stream, as `fromAnthropicStream` takes it: the SDK's raw stream
 * events (`client.messages.create({ stream: true })`, `client.messages.stream()`, and their beta
 * counterparts), plus the `ping` and `error` events that parsers other than the SDK may pass on.
 *
 * @example
 * ```ts
 * const events: AnthropicStreamEvent[] = [
 *   { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} } },
 *   { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"location":"Paris"}' } },
 *   { type: 'content_block_stop', index: 0 },
 * ];
 * ```
 */
export type AnthropicStreamEvent =
  | RawMessageStreamEvent
  | BetaRawMessageStreamEvent
  | AnthropicPingEvent
  | AnthropicErrorEvent;

/**
 * What `fromAnthropicStream` reads: an async iterable of events (the SDK's `Stream` and
 * `MessageStream` are both) or an Observable of them.
 *
 * @example
 * ```ts
 * const source: AnthropicEventSource = client.messages.stream({ model, max_tokens: 1024, tools, messages });
 * ```
 */
export type AnthropicEventSource = AsyncIterable<AnthropicStreamEvent> | Observable<AnthropicStreamEvent>;

/**
 * The error a `fromAnthropicStream` Observable fails with when the stream itself carries an `error`
 * event. (A source that throws — as the SDK does for such an event — fails the Observable with what it
 * threw, unchanged.) Calls still open at that point were emitted first, as incomplete.
 *
 * @example
 * ```ts
 * try {
 *   await pipeline.run(fromAnthropicStream(events));
 * } catch (error) {
 *   if (error instanceof SourceError && error.cause instanceof AnthropicStreamError) {
 *     console.warn(error.cause.event.error.type); // e.g. 'overloaded_error'
 *   }
 * }
 * ```
 */
export class AnthropicStreamError extends Error {
  static {
    brand(this, 'AnthropicStreamError');
  }

  constructor(
    /** The `error` event as the stream sent it. */
    readonly event: AnthropicErrorEvent,
  ) {
    super(`the Anthropic stream failed: ${describeErrorEvent(event)}`);
    this.name = 'AnthropicStreamError';
  }
}

function describeErrorEvent(event: AnthropicErrorEvent): string {
  const error: unknown = (event as { error?: unknown }).error;
  if (!isObject(error)) return 'an error event without details';
  const { type, message } = error;
  const parts = [type, message].filter((part): part is string => typeof part === 'string' && part !== '');
  return parts.length > 0 ? parts.join(': ') : 'an error event without details';
}
