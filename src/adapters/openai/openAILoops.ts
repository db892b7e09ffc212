import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { Observable } from 'rxjs';
import type { Pipeline } from '../../types/pipeline.js';
import { driveLoop, type LoopOptions, type LoopRequestContext, type LoopResult } from '../loop/index.js';
import { customOption, type OpenAIResponsesOptions } from './customTools.js';
import { continueOpenAIChatTurn, runOpenAIChatTurn, type OpenAIChatTurn } from './runChatTurn.js';
import { continueOpenAIResponsesTurn, runOpenAIResponsesTurn, type OpenAIResponsesTurn } from './runResponsesTurn.js';

/**
 * Options of {@link runOpenAIChatLoop}: the conversation so far, how to request a response, and the
 * loop's (`turn`, `maxSteps`, `stopWhen`, `signal`, `continuation` and `answers` to re-enter).
 *
 * @example
 * ```ts
 * const options: OpenAIChatLoopOptions = {
 *   messages: [{ role: 'user', content: 'Tidy notes/' }],
 *   request: (messages) => client.chat.completions.create({ model: 'gpt-4.1', messages, tools, stream: true }),
 *   turn: 'conv-1',
 * };
 * ```
 */
export interface OpenAIChatLoopOptions extends LoopOptions {
  /** The conversation so far (not changed: the result's `messages` is a new array). */
  readonly messages: readonly ChatCompletionMessageParam[];
  /** Requests the next response with the conversation, streamed, with your own client. */
  readonly request: (
    messages: ChatCompletionMessageParam[],
    context: LoopRequestContext,
  ) => AsyncIterable<ChatCompletionChunk> | Observable<ChatCompletionChunk> | PromiseLike<AsyncIterable<ChatCompletionChunk> | Observable<ChatCompletionChunk>>;
}

/**
 * What {@link runOpenAIChatLoop} resolves to.
 *
 * @example
 * ```ts
 * const loop: OpenAIChatLoop = await runOpenAIChatLoop(pipeline, options);
 * ```
 */
export type OpenAIChatLoop = LoopResult<ChatCompletionMessageParam, OpenAIChatTurn>;

/**
 * An agent loop on Chat Completions, durable when given a `turn`: request (your `request`, your
 * client), run the calls while the response streams (`runOpenAIChatTurn`), append the assistant
 * message and one `tool` message per call, and again — until the model answers without a tool call
 * (`'done'`), a `stopWhen` condition holds (`'stopped'`), `maxSteps` is reached (`'max_steps'`), the
 * signal aborts (`'aborted'`), or a step's turn suspends or is leased (`'suspended'`, `'turn_leased'`,
 * `'lease_lost'`: nothing more is sent to the model). Re-enter a suspended loop with its
 * `continuation`, the answers and the `messages` it returned, in any process (see `runAnthropicLoop`).
 *
 * @throws {ConfigError} (as the rejection, before anything runs) for a `maxSteps` that is not a positive
 *   integer, or a `secret` under 32 bytes.
 * @throws {ContinuationError} (as the rejection) for a `continuation` refused; nothing ran then.
 * @throws {SourceError} (as the rejection) when a response's stream fails midway; what `request` throws.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * import { runOpenAIChatLoop, stepCountIs, toOpenAIChatTools } from 'toolstream/openai';
 *
 * const client = new OpenAI();
 * const loop = await runOpenAIChatLoop(pipeline, {
 *   messages: [{ role: 'user', content: 'Tidy notes/' }],
 *   request: (messages) => client.chat.completions.create({ model: 'gpt-4.1', messages, tools: toOpenAIChatTools(pipeline), stream: true }),
 *   turn: 'conv-1',
 *   stopWhen: stepCountIs(10),
 * });
 * if (loop.outcome === 'suspended') askHuman(loop.pending, loop.continuation);
 * ```
 */
export function runOpenAIChatLoop(pipeline: Pipeline, options: OpenAIChatLoopOptions): Promise<OpenAIChatLoop> {
  const { request, signal, secret } = options;
  return driveLoop<ChatCompletionMessageParam, OpenAIChatTurn>(options, {
    where: 'runOpenAIChatLoop',
    run: async (messages, step, turn) => {
      const chunks = await request([...messages], { step, signal });
      return runOpenAIChatTurn(pipeline, chunks, { step, secret, ...(turn === undefined ? {} : { turn }), ...(signal === undefined ? {} : { signal }) });
    },
    resume: (continuation, answers) => continueOpenAIChatTurn(pipeline, continuation, { answers, secret, ...(signal === undefined ? {} : { signal }) }),
    messagesOf: (turn) => turn.messages,
  });
}

/**
 * Options of {@link runOpenAIResponsesLoop}: the input so far, how to request a response, the
 * free-form tools (`custom`), and the loop's (`turn`, `maxSteps`, `stopWhen`, `signal`,
 * `continuation` and `answers` to re-enter).
 *
 * @example
 * ```ts
 * const options: OpenAIResponsesLoopOptions = {
 *   input: [{ role: 'user', content: 'Tidy notes/' }],
 *   request: (input) => client.responses.create({ model: 'gpt-4.1', input, tools, stream: true }),
 * };
 * ```
 */
export interface OpenAIResponsesLoopOptions extends LoopOptions, OpenAIResponsesOptions {
  /** The conversation so far, as input items (not changed: the result's `messages` is a new array). */
  readonly input: readonly ResponseInputItem[];
  /** Requests the next response with the input, streamed, with your own client (stateless: the whole input each time). */
  readonly request: (
    input: ResponseInputItem[],
    context: LoopRequestContext,
  ) => AsyncIterable<ResponseStreamEvent> | Observable<ResponseStreamEvent> | PromiseLike<AsyncIterable<ResponseStreamEvent> | Observable<ResponseStreamEvent>>;
}

/**
 * What {@link runOpenAIResponsesLoop} resolves to; its `messages` are the input items.
 *
 * @example
 * ```ts
 * const loop: OpenAIResponsesLoop = await runOpenAIResponsesLoop(pipeline, options);
 * ```
 */
export type OpenAIResponsesLoop = LoopResult<ResponseInputItem, OpenAIResponsesTurn>;

/**
 * An agent loop on the Responses API, stateless (the whole input each request) and durable when given
 * a `turn`: as {@link runOpenAIChatLoop}, with `runOpenAIResponsesTurn` for each step; each step adds
 * the response's output items, then one output item per call.
 *
 * @throws {ConfigError} (synchronously) when `options.custom` is not from `openAICustomTools`.
 * @throws {ConfigError} (as the rejection, before anything runs) for a `maxSteps` that is not a positive
 *   integer, or a `secret` under 32 bytes.
 * @throws {ContinuationError} (as the rejection) for a `continuation` refused; nothing ran then.
 * @throws {SourceError} (as the rejection) when a response's stream fails midway; what `request` throws.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * import { runOpenAIResponsesLoop, toOpenAIResponsesTools } from 'toolstream/openai';
 *
 * const client = new OpenAI();
 * const loop = await runOpenAIResponsesLoop(pipeline, {
 *   input: [{ role: 'user', content: 'Tidy notes/' }],
 *   request: (input) => client.responses.create({ model: 'gpt-4.1', input, tools: toOpenAIResponsesTools(pipeline), stream: true }),
 *   turn: 'conv-1',
 * });
 * ```
 */
export function runOpenAIResponsesLoop(pipeline: Pipeline, options: OpenAIResponsesLoopOptions): Promise<OpenAIResponsesLoop> {
  const custom = customOption('runOpenAIResponsesLoop', options);
  const { request, signal, secret } = options;
  const customs = custom === undefined ? {} : { custom };
  return driveLoop<ResponseInputItem, OpenAIResponsesTurn>(
    { ...options, messages: options.input },
    {
      where: 'runOpenAIResponsesLoop',
      run: async (input, step, turn) => {
        const events = await request([...input], { step, signal });
        return runOpenAIResponsesTurn(pipeline, events, { step, secret, ...customs, ...(turn === undefined ? {} : { turn }), ...(signal === undefined ? {} : { signal }) });
      },
      resume: (continuation, answers) => continueOpenAIResponsesTurn(pipeline, continuation, { answers, secret, ...customs, ...(signal === undefined ? {} : { signal }) }),
      messagesOf: (turn) => turn.items,
    },
  );
}
