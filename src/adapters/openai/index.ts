/**
 * `toolstream/openai` — OpenAI adapters: model streams in, tool results out, tools offered.
 *
 * Chat Completions: {@link runOpenAIChatTurn} (one turn of an agent loop), {@link runOpenAIChatLoop}
 * (the loop), {@link continueOpenAIChatTurn}, {@link fromOpenAIChatStream},
 * {@link toOpenAIChatToolMessages}, {@link toOpenAIChatTools}. Responses API:
 * {@link runOpenAIResponsesTurn}, {@link runOpenAIResponsesLoop}, {@link continueOpenAIResponsesTurn},
 * {@link fromOpenAIResponsesStream}, {@link toOpenAIResponsesInput}, {@link toOpenAIResponsesTools},
 * and {@link openAICustomTools} for tools the model calls with free-form text. With a `turn` on a
 * journaled pipeline the turns and loops are durable: a call waiting for approval stops them with a
 * signed continuation, which the `continue…` functions (or the loops) take back with the answers.
 *
 * Only the `openai` SDK's types are used (no runtime import): the SDK is an optional peer dependency,
 * and any source of the same chunk or event shapes works.
 *
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { runOpenAIChatTurn, toOpenAIChatTools } from 'toolstream/openai';
 *
 * const pipeline = createPipeline({ tools });
 * for (let step = 0; step < 20; step++) {
 *   const stream = await client.chat.completions.create({ model: 'gpt-4.1', messages, tools: toOpenAIChatTools(pipeline), stream: true });
 *   const turn = await runOpenAIChatTurn(pipeline, stream); // the calls run while the model streams
 *   messages.push(...turn.messages); // the assistant message, then one tool message per call
 *   if (turn.done) break;
 * }
 * ```
 *
 * @module
 */

// Chat Completions
export { continueOpenAIChatTurn, runOpenAIChatTurn } from './runChatTurn.js';
export type { OpenAIChatTurn, OpenAIChatTurnOptions } from './runChatTurn.js';
export { runOpenAIChatLoop } from './openAILoops.js';
export type { OpenAIChatLoop, OpenAIChatLoopOptions } from './openAILoops.js';
export { fromOpenAIChatStream } from './chatStream.js';
export { toOpenAIChatToolMessages, toOpenAIChatTools } from './chatFormat.js';

// Responses API
export { continueOpenAIResponsesTurn, runOpenAIResponsesTurn } from './runResponsesTurn.js';
export type { ContinueOpenAIResponsesOptions, OpenAIResponsesTurn, OpenAIResponsesTurnOptions } from './runResponsesTurn.js';
export { runOpenAIResponsesLoop } from './openAILoops.js';
export type { OpenAIResponsesLoop, OpenAIResponsesLoopOptions } from './openAILoops.js';
export { fromOpenAIResponsesStream } from './responsesStream.js';
export { toOpenAIResponsesInput, toOpenAIResponsesTools } from './responsesFormat.js';
export { OpenAIResponsesStreamError } from './errors.js';
// Free-form (custom) tools: one declaration for the three Responses helpers, made by openAICustomTools.
export { openAICustomTools } from './customTools.js';
export type { OpenAICustomTools, OpenAICustomToolSpec, OpenAIResponsesOptions } from './customTools.js';

// The durable loop's shared parts (the same in toolstream/anthropic and toolstream/ai-sdk).
export { ContinuationError, hasToolCall, stepCountIs } from '../loop/index.js';
export type {
  Continuation,
  ContinuationOptions,
  ContinueOptions,
  DurableTurnFields,
  LoopOptions,
  LoopOutcome,
  LoopRequestContext,
  LoopProvider,
  LoopResult,
  LoopState,
  LoopTurn,
  StopCondition,
  TurnOutcome,
} from '../loop/index.js';
