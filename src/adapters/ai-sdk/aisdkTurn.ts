// The shapes of one AI SDK step run through a pipeline: what runAISDKTurn reads, its options, what it and continueAISDKTurn resolve to.
import type { ModelMessage, ToolModelMessage } from 'ai';
import type { RunOptions } from '../../types/pipeline.js';
import type { ToolResult } from '../../types/toolResult.js';
import type { ContinuationOptions, LoopTurn } from '../loop/index.js';
import type { AISDKStreamPart } from './fromAISDKStream.js';

/**
 * What {@link runAISDKTurn} reads of a `streamText` result: its `fullStream`, and the SDK's own
 * assembly of the same step (`response`, `text`). `streamText(...)` returns one.
 *
 * @example
 * ```ts
 * const step: AISDKStep = streamText({ model, tools: toAISDKTools(pipeline), messages });
 * ```
 */
export interface AISDKStep {
  readonly fullStream: AsyncIterable<AISDKStreamPart> | ReadableStream<AISDKStreamPart>;
  readonly response: PromiseLike<{ readonly messages: readonly ModelMessage[] }>;
  readonly text: PromiseLike<string>;
}

/**
 * One model step, run: its tool calls' results and the messages that carry it into the next
 * `streamText` call. What {@link runAISDKTurn} and {@link continueAISDKTurn} resolve to; `outcome` says
 * how it ended (the fields every provider's turn shares, `DurableTurnFields`):
 * - `'next'`: every call has its result: append `messages` and call the model again.
 * - `'done'`: the model called no tool: stop.
 * - `'suspended'`: a durable turn's calls wait for a human's approval (`pending`); the calls that could
 *   run have run. Send nothing to the model. The assistant message in `messages` carries the approvals
 *   as the SDK's own `tool-approval-request` parts (`approvalId` is the signed token), as `streamText`
 *   does for a tool with `needsApproval`; append `messages`, and once the answers are in the history
 *   (`tool-approval-response` parts) go on with {@link continueAISDKTurn} and `continuation`, in any
 *   process sharing the journal and the secret.
 * - `'turn_leased'`: another process drives the turn now; nothing ran here. `'lease_lost'`: another
 *   process took it over while this one ran it; `results` holds what ran here. Nothing goes to the
 *   model; `continuation` (when set) goes on with it once that process is done.
 *
 * @example
 * ```ts
 * const turn: AISDKTurn = await runAISDKTurn(pipeline, streamText({ model, tools, messages }), { turn: 'chat-1/1' });
 * messages.push(...turn.messages);
 * if (turn.outcome === 'suspended') return askHuman(turn.pending, turn.continuation);
 * ```
 */
export interface AISDKTurn extends LoopTurn {
  /** One result per tool call, in the model's order (`lease_lost`: those given out before; `turn_leased`: none). */
  readonly results: readonly ToolResult[];
  /**
   * The tool message answering the calls that have a result (see `toAISDKToolMessage`); `undefined`
   * when there is none. For `'next'`, one part per call; for `'suspended'`, the suspended calls have
   * none yet.
   */
  readonly toolMessage: ToolModelMessage | undefined;
  /**
   * The step's messages: its assistant message, as the SDK assembled it (`response.messages`, without
   * the SDK's own error results for calls it found invalid: the pipeline answers those; each tool call
   * once) — for `'suspended'`, with a `tool-approval-request` part per pending approval after the
   * calls — then `toolMessage` when there is one. After a run, append them to the history; after a
   * continue they stand in place of the step's messages (its assistant message and the tool messages
   * after it). `'turn_leased'`: none (a run) or the step as given (a continue); `'lease_lost'`: the
   * assistant message.
   */
  readonly messages: ModelMessage[];
  /** The text the model wrote in this step. */
  readonly text: string;
  /** Whether the model is done: it called no tool (`outcome === 'done'`). */
  readonly done: boolean;
}

/**
 * Options of {@link runAISDKTurn}: those of `pipeline.run`, and the step's place in its loop.
 *
 * @example
 * ```ts
 * const options: AISDKTurnOptions = { turn: 'chat-1/2', step: 2, signal };
 * ```
 */
export interface AISDKTurnOptions extends RunOptions, ContinuationOptions {
  /** The step's number in its loop, carried by the continuation. @default 1 */
  readonly step?: number;
}
