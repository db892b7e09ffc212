/**
 * `toolstream/ai-sdk`: run the tool calls of a Vercel AI SDK (v6) `streamText` call with a toolstream
 * pipeline, and hand the results back as the SDK's tool message. `runAISDKLoop` is the agent loop
 * (`stopWhen`, `maxSteps`, durable turns whose approvals are the SDK's own `tool-approval-request`
 * parts, continued in any process); `runAISDKTurn` does one step of it, `continueAISDKTurn` goes on
 * with a suspended one; `toAISDKTools` gives `streamText` the pipeline's tools without `execute`;
 * `toAISDKToolOutputChunks` completes the tool parts `useChat` shows.
 *
 * @example
 * ```ts
 * import { streamText } from 'ai';
 * import { runAISDKLoop, stepCountIs, toAISDKTools } from 'toolstream/ai-sdk';
 *
 * const tools = toAISDKTools(pipeline); // no `execute`: toolstream runs them
 * const loop = await runAISDKLoop(pipeline, {
 *   messages,
 *   request: (messages) => streamText({ model, tools, messages }),
 *   stopWhen: stepCountIs(10),
 * });
 * messages = loop.messages; // each assistant message, then one tool-result per call
 * ```
 *
 * @module
 */
export { runAISDKTurn } from './runAISDKTurn.js';
export type { AISDKStep, AISDKTurn, AISDKTurnOptions } from './aisdkTurn.js';
export { continueAISDKTurn } from './continueAISDKTurn.js';
export { continuationOf, runAISDKLoop } from './runAISDKLoop.js';
export type { AISDKLoop, AISDKLoopOptions, AISDKLoopStep } from './runAISDKLoop.js';
// The durable loop's shared parts (the same in toolstream/anthropic and toolstream/openai).
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
export { fromAISDKApprovalResponses, toAISDKApprovalRequests } from './aisdkApprovals.js';
export { toAISDKTools } from './toAISDKTools.js';
export { fromAISDKStream } from './fromAISDKStream.js';
export type { AISDKStreamPart } from './fromAISDKStream.js';
export { toAISDKToolMessage } from './toAISDKToolMessage.js';
export { toAISDKToolOutputChunks } from './toAISDKToolOutputChunks.js';
export { toAISDKEventChunks } from './toAISDKEventChunks.js';
