import type { ModelMessage, UIMessage, UIMessageChunk } from 'ai';
import type { Pipeline } from '../../types/pipeline.js';
import { ConfigError } from '../../util/errors.js';
import { driveLoop, type LoopOptions, type LoopRequestContext, type LoopResult } from '../loop/index.js';
import { lastAssistantIndex } from './aisdkApprovals.js';
import { continueAISDKTurn } from './continueAISDKTurn.js';
import type { AISDKStep, AISDKTurn } from './aisdkTurn.js';
import { runAISDKTurn } from './runAISDKTurn.js';
import { toAISDKToolOutputChunks } from './toAISDKToolOutputChunks.js';

/**
 * What the loop's `request` returns: a `streamText` result. `toUIMessageStream` is read when the loop
 * writes to a UI message stream (`writer`).
 *
 * @example
 * ```ts
 * const request = (messages: ModelMessage[]): AISDKLoopStep => streamText({ model, tools, messages });
 * ```
 */
export interface AISDKLoopStep extends AISDKStep {
  /** The step's UI message stream (`streamText`'s own): read only when the loop has a `writer`. */
  toUIMessageStream?(options?: { readonly sendStart?: boolean; readonly sendFinish?: boolean }): AsyncIterable<UIMessageChunk>;
}

/**
 * Options of {@link runAISDKLoop}: the loop's (`maxSteps`, `stopWhen`, `turn`, `continuation`, …),
 * the history, how to call the model, and where the page reads.
 *
 * @example
 * ```ts
 * const options: AISDKLoopOptions = { messages, request: (messages) => streamText({ model, tools, messages }), turn: 'chat-1', stopWhen: stepCountIs(5) };
 * ```
 */
export interface AISDKLoopOptions extends LoopOptions {
  /** The conversation so far; to re-enter with `continuation`, it ends with the suspended step and its answers. */
  readonly messages: readonly ModelMessage[];
  /** Calls the model: `streamText({ model, tools: toAISDKTools(pipeline), messages })` (no `execute`, the default `stopWhen`). */
  readonly request: (messages: ModelMessage[], context: LoopRequestContext) => AISDKLoopStep;
  /**
   * A UI message stream to write to (`createUIMessageStream`'s `writer`): each step's own chunks as the
   * SDK writes them (text, tool inputs), then its calls' outputs (`toAISDKToolOutputChunks`: outputs,
   * errors, denials, and `tool-approval-request` for suspended calls), and at the end a
   * `message-metadata` chunk `{ toolstream: { outcome, continuation } }` that the page keeps on the
   * assistant message and sends back with the answers (read it with {@link continuationOf}).
   */
  readonly writer?: {
    /** Writes one chunk to the UI message stream. */
    write(chunk: UIMessageChunk): void;
  };
}

/**
 * What {@link runAISDKLoop} resolves to: the loop's outcome (`'done'`, `'stopped'`, `'max_steps'`,
 * `'aborted'`, `'suspended'`, `'turn_leased'`, `'lease_lost'`), the history with every step's messages,
 * the turns, and for a suspended loop the pending approvals and the continuation.
 *
 * @example
 * ```ts
 * const loop: AISDKLoop = await runAISDKLoop(pipeline, options);
 * if (loop.outcome === 'suspended') save(loop.messages, loop.continuation);
 * ```
 */
export type AISDKLoop = LoopResult<ModelMessage, AISDKTurn>;

/**
 * An agent loop on the AI SDK (v6) with toolstream running the tools: calls the model, runs the step's
 * calls while it streams ({@link runAISDKTurn}), appends the assistant message and the results, and
 * goes on until the model stops calling tools, a `stopWhen` condition holds (`stepCountIs`,
 * `hasToolCall`, or your own, asked after each answered step, as the SDK's `stopWhen`), `maxSteps`
 * (default 20, counted across continuations), the signal aborts, or a step's durable turn suspends or is
 * held by another process. It is the loop `streamText` runs with `stopWhen` and tools with `execute`,
 * made durable.
 *
 * With `turn` (and a journaled pipeline with `suspendApprovals()`), step `n` runs as the durable turn
 * `${turn}/${n}`: a call that needs a human's approval suspends the loop (`outcome: 'suspended'`), its
 * step stays in `messages` with the SDK's own `tool-approval-request` parts (and, with `writer`, the
 * page gets them as `approval-requested` tool parts). To go on — in any process whose pipeline has the
 * same journal and secret — call the loop again with the same `turn`, the `continuation`, and the
 * history ending with the answers (`tool-approval-response` parts, as `convertToModelMessages` writes
 * them after `addToolApprovalResponse`): the step's turn resumes (nothing that ran runs again), its
 * results go to the model in one tool message in the model's order, and the loop goes on. A
 * continuation is accepted once (a double submit is refused with `continuation_used`).
 *
 * @throws {ContinuationError} (as a rejection) for a refused continuation; nothing ran.
 * @throws {ConfigError} (as a rejection) for a `maxSteps` that is not a positive integer or a `secret`
 *   under 32 bytes (before anything runs), and, with `writer`, for a `request` whose step has no
 *   `toUIMessageStream` (not a `streamText` result).
 *
 * @example
 * ```ts
 * import { streamText, type ModelMessage } from 'ai';
 * import { runAISDKLoop, stepCountIs, toAISDKTools } from 'toolstream/ai-sdk';
 *
 * const tools = toAISDKTools(pipeline);
 * const loop = await runAISDKLoop(pipeline, {
 *   messages: [{ role: 'user', content: 'Summarise the TODOs in notes/' }],
 *   request: (messages) => streamText({ model, tools, messages }),
 *   turn: `chat-${chatId}/${requestId}`,
 *   stopWhen: stepCountIs(10),
 * });
 * if (loop.outcome === 'suspended') askHuman(loop.pending, loop.continuation);
 * ```
 */
export async function runAISDKLoop(pipeline: Pipeline, options: AISDKLoopOptions): Promise<AISDKLoop> {
  const { writer, request, signal, secret } = options;
  const continued = options.continuation !== undefined;
  // Re-entering, the history ends with the suspended step: the continued turn stands in place of it.
  const at = continued ? lastAssistantIndex(options.messages) : -1;
  const history = at < 0 ? options.messages : options.messages.slice(0, at);
  const step = at < 0 ? options.messages : options.messages.slice(at);
  let first = !continued;
  const secretOption = secret === undefined ? {} : { secret };

  const loop = await driveLoop<ModelMessage, AISDKTurn>(
    { ...options, messages: history },
    {
      where: 'runAISDKLoop',
      run: async (messages, number, turn) => {
        const result = request([...messages], { step: number, signal });
        const forward = writer === undefined ? Promise.resolve() : forwardStep(result, writer, first);
        first = false;
        const [ran] = await Promise.all([
          runAISDKTurn(pipeline, result, { step: number, ...secretOption, ...(turn === undefined ? {} : { turn }), ...(signal === undefined ? {} : { signal }) }),
          forward,
        ]);
        writeOutputs(ran, writer);
        return ran;
      },
      resume: async (continuation, answers) => {
        const ran = await continueAISDKTurn(pipeline, continuation, step, { answers, ...secretOption, ...(signal === undefined ? {} : { signal }) });
        writeOutputs(ran, writer);
        return ran;
      },
      messagesOf: (turn) => turn.messages,
    },
  );
  writer?.write({ type: 'message-metadata', messageMetadata: { toolstream: { outcome: loop.outcome, continuation: loop.continuation ?? null } } });
  return loop;
}

/** The key of the assistant message's metadata that carries the loop's continuation to the page and back. */
const METADATA_KEY = 'toolstream';

/**
 * The continuation a page sent back: the `{ toolstream: { continuation } }` metadata that
 * {@link runAISDKLoop} wrote on the assistant message, when that message is the last one (the page
 * answered its approvals, `useChat`'s `addToolApprovalResponse`, and sent the conversation again).
 * `undefined` otherwise — a new user message starts a new loop.
 *
 * @param messages - The `UIMessage`s of the request, as `useChat` sends them.
 * @returns The continuation as received (the loop checks it), or `undefined`.
 *
 * @example
 * ```ts
 * const { messages } = await request.json();
 * const loop = await runAISDKLoop(pipeline, { messages: await convertToModelMessages(messages), continuation: continuationOf(messages), … });
 * ```
 */
export function continuationOf(messages: readonly UIMessage[]): unknown {
  const last = messages.at(-1);
  if (last?.role !== 'assistant' || typeof last.metadata !== 'object' || last.metadata === null) return undefined;
  const carried = (last.metadata as Record<string, unknown>)[METADATA_KEY];
  if (typeof carried !== 'object' || carried === null) return undefined;
  return (carried as { readonly continuation?: unknown }).continuation ?? undefined;
}

/** Writes the step's own UI chunks (text, tool inputs) as the SDK streams them. */
async function forwardStep(step: AISDKLoopStep, writer: NonNullable<AISDKLoopOptions['writer']>, sendStart: boolean): Promise<void> {
  if (step.toUIMessageStream === undefined) {
    throw new ConfigError('runAISDKLoop', 'request', 'a function that returns a streamText result, whose toUIMessageStream the `writer` option needs (this step has none)', step);
  }
  for await (const chunk of step.toUIMessageStream({ sendStart, sendFinish: false })) writer.write(chunk);
}

/** Completes the step's tool parts: outputs, errors, denials, approval requests. */
function writeOutputs(turn: AISDKTurn, writer: AISDKLoopOptions['writer']): void {
  if (writer === undefined) return;
  for (const chunk of toAISDKToolOutputChunks(turn.results)) writer.write(chunk);
}
