import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { MissingSdkError, TestingOptionError } from '../errors.js';
import { streamedResponse, toSSE, type WireFormat } from './sse.js';

/**
 * The events the official SDK's parser yields for each wire format.
 *
 * @example
 * ```ts
 * const first: ScriptedEvent<'chat'> = chunks[0]; // a ChatCompletionChunk
 * ```
 */
export type ScriptedEvent<F extends WireFormat> = F extends 'anthropic' ? RawMessageStreamEvent : F extends 'chat' ? ChatCompletionChunk : ResponseStreamEvent;

/**
 * Options of {@link scriptedStream}.
 *
 * @example
 * ```ts
 * const options: ScriptedStreamOptions = { chunkSize: 1 }; // one byte at a time
 * ```
 */
export interface ScriptedStreamOptions {
  /**
   * Bytes per network chunk of the SSE body: small ones split lines, events and characters.
   * @default 37, or more for a long body: at most 512 chunks (the SDKs' line decoders rescan a line
   *   on every chunk, so a 400 KB body in 37-byte chunks takes seconds to parse)
   */
  readonly chunkSize?: number;
}

/** The SDK stream class: its `fromSSEResponse`, as both SDKs have it. */
interface SdkStream {
  fromSSEResponse(response: Response, controller: AbortController): AsyncIterable<unknown>;
}

type Sdk = '@anthropic-ai/sdk' | 'openai';

/** Loaded on first use: the SDKs are optional peers, and only this function needs one. */
const LOADERS: Record<Sdk, () => Promise<SdkStream>> = {
  '@anthropic-ai/sdk': async () => (await import('@anthropic-ai/sdk/streaming')).Stream as unknown as SdkStream,
  openai: async () => (await import('openai/streaming')).Stream as unknown as SdkStream,
};

/** The most network chunks a body is cut into by default (see `ScriptedStreamOptions.chunkSize`). */
const MAX_CHUNKS = 512;

/** Node's codes for a package that is not installed (or does not export the path). */
const NOT_INSTALLED = new Set(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED']);

/**
 * A model stream as a client receives it: `events` written as the provider's SSE body ({@link toSSE}),
 * delivered in small network chunks ({@link streamedResponse}), and parsed by the official SDK's own
 * parser (`Stream.fromSSEResponse` of `@anthropic-ai/sdk` for `'anthropic'`, of `openai` for `'chat'`
 * and `'responses'`) — exactly what `client.messages.create({ stream: true })` or
 * `client.chat.completions.create({ stream: true })` hands your code, with its quirks: the Anthropic SDK
 * drops `ping`s and events without an `event:` line and throws an `APIError` for an `error` event; the
 * OpenAI SDK throws for a chunk with an `error` field and stops at `[DONE]`.
 *
 * The SDK is loaded with `import()` when the stream is first iterated (the SDKs are optional peer
 * dependencies); if it is not installed, iterating rejects with a {@link MissingSdkError} naming the
 * package to install. Each iteration parses the body anew. The parser is promise-based, so this stream
 * does not follow a `TestScheduler`: in marble tests pass the events to `cold()` or `from()` instead.
 *
 * @param format The wire format, which picks the SDK.
 * @param events The events to send (e.g. `stream.events` of `anthropicStreams`).
 * @param options `chunkSize`.
 * @throws {TestingOptionError} for an unknown `format` or a bad `chunkSize`.
 *
 * @example
 * ```ts
 * import { fromAnthropicStream } from 'toolstream/anthropic';
 * import { scriptedStream } from 'toolstream/testing';
 *
 * const results = await pipeline.run(fromAnthropicStream(scriptedStream('anthropic', stream.events, { chunkSize: 5 })));
 * ```
 */
export function scriptedStream<F extends WireFormat>(format: F, events: readonly unknown[], options: ScriptedStreamOptions = {}): AsyncIterable<ScriptedEvent<F>> {
  const text = toSSE(format, events);
  const chunkSize = options.chunkSize ?? Math.max(37, Math.ceil(byteLength(text) / MAX_CHUNKS));
  if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new TestingOptionError('scriptedStream', 'chunkSize', 'a positive integer', chunkSize);
  const sdk: Sdk = format === 'anthropic' ? '@anthropic-ai/sdk' : 'openai';
  return {
    [Symbol.asyncIterator]: () => parse(sdk, text, chunkSize)[Symbol.asyncIterator]() as AsyncIterator<ScriptedEvent<F>>,
  };
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

async function* parse(sdk: Sdk, text: string, chunkSize: number): AsyncGenerator<unknown, void, undefined> {
  let Stream: SdkStream;
  try {
    Stream = await LOADERS[sdk]();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    throw typeof code === 'string' && NOT_INSTALLED.has(code) ? new MissingSdkError(sdk, error) : error;
  }
  yield* Stream.fromSSEResponse(streamedResponse(text, chunkSize), new AbortController());
}
