/**
 * The Anthropic Messages adapter (`toolstream/anthropic`): a model's streamed tool calls into the
 * pipeline, its results back into the next user message, and the pipeline's tools into the request;
 * `runAnthropicTurn` does one turn of an agent loop (the calls, the assistant message, the results),
 * `runAnthropicLoop` the whole loop — durable with a `turn`: a call waiting for approval stops it with
 * a continuation, which `runAnthropicLoop` (or `continueAnthropicTurn`) takes back with the answers.
 * Uses only types from `@anthropic-ai/sdk`: the SDK is not needed at run time.
 *
 * @example
 * ```ts
 * import { runAnthropicTurn, toAnthropicTools } from 'toolstream/anthropic';
 *
 * for (let step = 0; step < 20; step++) {
 *   const stream = await client.messages.create({ model, max_tokens: 4096, tools: toAnthropicTools(pipeline), messages, stream: true });
 *   const turn = await runAnthropicTurn(pipeline, stream); // the calls run while the model streams
 *   messages.push(...turn.messages); // the assistant message, then one tool_result per tool_use
 *   if (turn.done) break;
 * }
 * ```
 *
 * @module
 */
export { fromAnthropicStream } from './fromAnthropicStream.js';
export { continueAnthropicTurn, runAnthropicTurn } from './runAnthropicTurn.js';
export type { AnthropicTurn, AnthropicTurnOptions } from './runAnthropicTurn.js';
export { runAnthropicLoop } from './runAnthropicLoop.js';
export type { AnthropicLoop, AnthropicLoopOptions } from './runAnthropicLoop.js';
// The durable loop's shared parts (the same in toolstream/openai and toolstream/ai-sdk).
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
export type { AnthropicAssistantMessage } from './assistantMessage.js';
export { toAnthropicToolResults } from './toAnthropicToolResults.js';
export type { AnthropicToolResultMessage } from './toAnthropicToolResults.js';
export { toAnthropicTools } from './toAnthropicTools.js';
export { AnthropicStreamError } from './events.js';
export type { AnthropicErrorEvent, AnthropicEventSource, AnthropicPingEvent, AnthropicStreamEvent } from './events.js';
