/**
 * `toolstream/ai-sdk`: run the tool calls of a Vercel AI SDK (v6) `streamText` call with a toolstream
 * pipeline, and hand the results back as the SDK's tool message.
 *
 * @example
 * ```ts
 * import { fromAISDKStream, toAISDKToolMessage } from 'toolstream/ai-sdk';
 *
 * const step = streamText({ model, tools, messages }); // tools without `execute`
 * const results = await pipeline.run(fromAISDKStream(step.fullStream));
 * messages.push(...(await step.response).messages.filter((m) => m.role === 'assistant'), toAISDKToolMessage(results));
 * ```
 *
 * @module
 */
export { fromAISDKStream } from './fromAISDKStream.js';
export type { AISDKStreamPart } from './fromAISDKStream.js';
export { toAISDKToolMessage } from './toAISDKToolMessage.js';
