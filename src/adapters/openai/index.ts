/**
 * `toolstream/openai` — OpenAI adapters: model streams in, tool results out, tools offered.
 *
 * Chat Completions: {@link fromOpenAIChatStream}, {@link toOpenAIChatToolMessages},
 * {@link toOpenAIChatTools}. Responses API: {@link fromOpenAIResponsesStream},
 * {@link toOpenAIResponsesInput}, {@link toOpenAIResponsesTools}, and {@link openAICustomTools} for
 * tools the model calls with free-form text.
 *
 * Only the `openai` SDK's types are used (no runtime import): the SDK is an optional peer dependency,
 * and any source of the same chunk or event shapes works.
 *
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { fromOpenAIChatStream, toOpenAIChatTools, toOpenAIChatToolMessages } from 'toolstream/openai';
 *
 * const pipeline = createPipeline({ tools });
 * const stream = client.chat.completions.stream({ model: 'gpt-4o', messages, tools: toOpenAIChatTools(pipeline) });
 * const results = await pipeline.run(fromOpenAIChatStream(stream));
 * messages.push(await stream.finalMessage(), ...toOpenAIChatToolMessages(results));
 * ```
 *
 * @module
 */

// Chat Completions
export { fromOpenAIChatStream } from './chatStream.js';
export { toOpenAIChatToolMessages, toOpenAIChatTools } from './chatFormat.js';

// Responses API
export { fromOpenAIResponsesStream } from './responsesStream.js';
export { toOpenAIResponsesInput, toOpenAIResponsesTools } from './responsesFormat.js';
export { OpenAIResponsesStreamError } from './errors.js';
// Free-form (custom) tools: one declaration for the three Responses helpers, made by openAICustomTools.
export { openAICustomTools } from './customTools.js';
export type { OpenAICustomTools, OpenAICustomToolSpec, OpenAIResponsesOptions } from './customTools.js';
