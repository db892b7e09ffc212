/**
 * The Anthropic Messages adapter (`toolstream/anthropic`): a model's streamed tool calls into the
 * pipeline, its results back into the next user message, and the pipeline's tools into the request.
 * Uses only types from `@anthropic-ai/sdk`: the SDK is not needed at run time.
 *
 * @example
 * ```ts
 * import { fromAnthropicStream, toAnthropicToolResults, toAnthropicTools } from 'toolstream/anthropic';
 *
 * const stream = client.messages.stream({ model, max_tokens: 1024, tools: toAnthropicTools(pipeline), messages });
 * const results = await pipeline.run(fromAnthropicStream(stream));
 * messages.push({ role: 'assistant', content: (await stream.finalMessage()).content }, toAnthropicToolResults(results));
 * ```
 *
 * @module
 */
export { fromAnthropicStream } from './fromAnthropicStream.js';
export { toAnthropicToolResults } from './toAnthropicToolResults.js';
export type { AnthropicToolResultMessage } from './toAnthropicToolResults.js';
export { toAnthropicTools } from './toAnthropicTools.js';
export { AnthropicStreamError } from './events.js';
export type { AnthropicErrorEvent, AnthropicEventSource, AnthropicPingEvent, AnthropicStreamEvent } from './events.js';
