/**
 * `toolstream/ai-sdk`: run the tool calls of a Vercel AI SDK (v6) `streamText` call with a toolstream
 * pipeline, and hand the results back as the SDK's tool message. `runAISDKTurn` does one turn of an
 * agent loop; `toAISDKTools` gives `streamText` the pipeline's tools without `execute`;
 * `toAISDKToolOutputChunks` completes the tool parts `useChat` shows.
 *
 * @example
 * ```ts
 * import { streamText } from 'ai';
 * import { runAISDKTurn, toAISDKTools } from 'toolstream/ai-sdk';
 *
 * const tools = toAISDKTools(pipeline); // no `execute`: toolstream runs them
 * for (let step = 0; step < 20; step++) {
 *   const turn = await runAISDKTurn(pipeline, streamText({ model, tools, messages }));
 *   messages.push(...turn.messages); // the assistant message, then one tool-result per call
 *   if (turn.done) break;
 * }
 * ```
 *
 * @module
 */
export { runAISDKTurn } from './runAISDKTurn.js';
export type { AISDKStep, AISDKTurn, AISDKTurnOptions } from './aisdkTurn.js';
export { continueAISDKTurn } from './continueAISDKTurn.js';
export { continuationOf, runAISDKLoop } from './runAISDKLoop.js';
export type { AISDKLoop, AISDKLoopOptions, AISDKLoopStep } from './runAISDKLoop.js';
// The loop's shared parts (the same for every provider's loop).
export { ContinuationError, DEFAULT_MAX_STEPS, hasToolCall, issueContinuation, stepCountIs, verifyContinuation } from '../loop/index.js';
export type { Continuation, ContinuationOptions, ContinueOptions, DurableTurnFields, LoopOptions, LoopOutcome, LoopState, StopCondition, TurnOutcome } from '../loop/index.js';
export { fromAISDKApprovalResponses, pendingOf, toAISDKApprovalRequests } from './aisdkApprovals.js';
export { toAISDKTools } from './toAISDKTools.js';
export { fromAISDKStream } from './fromAISDKStream.js';
export type { AISDKStreamPart } from './fromAISDKStream.js';
export { toAISDKToolMessage } from './toAISDKToolMessage.js';
export { toAISDKToolOutputChunks } from './toAISDKToolOutputChunks.js';
export { toAISDKEventChunks } from './toAISDKEventChunks.js';
