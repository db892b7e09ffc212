import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { Pipeline } from '../../types/pipeline.js';
import { driveLoop, type LoopOptions, type LoopRequestContext, type LoopResult } from '../loop/index.js';
import type { AnthropicEventSource } from './events.js';
import { continueAnthropicTurn, runAnthropicTurn, type AnthropicTurn } from './runAnthropicTurn.js';

/**
 * Options of {@link runAnthropicLoop}: the conversation so far, how to request a response, and the
 * loop's (`turn`, `maxSteps`, `stopWhen`, `signal`, `continuation` and `answers` to re-enter).
 *
 * @example
 * ```ts
 * const options: AnthropicLoopOptions = {
 *   messages: [{ role: 'user', content: 'Tidy notes/' }],
 *   request: (messages) => client.messages.create({ model, max_tokens: 4096, tools, messages, stream: true }),
 *   turn: 'conv-1',
 * };
 * ```
 */
export interface AnthropicLoopOptions extends LoopOptions {
  /** The conversation so far (not changed: the result's `messages` is a new array). */
  readonly messages: readonly MessageParam[];
  /**
   * Requests the next response with the conversation, streamed — with your own client, as you would
   * (`client.messages.create({ …, messages, stream: true })` or `client.messages.stream(…)`).
   */
  readonly request: (
    messages: MessageParam[],
    context: LoopRequestContext,
  ) => AnthropicEventSource | PromiseLike<AnthropicEventSource>;
}

/**
 * What {@link runAnthropicLoop} resolves to: why it stopped, the conversation, each step's turn, and —
 * when a turn suspended or is leased — the pending approvals and the continuation that re-enters it.
 *
 * @example
 * ```ts
 * const loop: AnthropicLoop = await runAnthropicLoop(pipeline, options);
 * if (loop.outcome === 'done') console.log(loop.text);
 * ```
 */
export type AnthropicLoop = LoopResult<MessageParam, AnthropicTurn>;

/**
 * An agent loop on Anthropic's Messages API, durable when given a `turn`: request a response (your
 * `request`, your client), run its calls while it streams (`runAnthropicTurn`), append the assistant
 * message and its results, and again — until the model answers without a tool call (`'done'`), a
 * `stopWhen` condition holds (`'stopped'`), `maxSteps` responses were made (`'max_steps'`), the signal
 * aborts (`'aborted'`), or a step's turn stops before every call is answered (`'suspended'`,
 * `'turn_leased'`, `'lease_lost'`: nothing more is sent to the model).
 *
 * A suspended loop is re-entered with its `continuation` and the answers — in another request, another
 * process, from a fresh pipeline on the same journal store and secret — and the conversation it
 * returned: the continued turn's assistant message and every result go back in the model's order, and
 * the loop goes on from that step. A continuation is accepted once.
 *
 * @throws {ConfigError} (as the rejection, before anything runs) for a `maxSteps` that is not a positive
 *   integer, or a `secret` under 32 bytes.
 * @throws {ContinuationError} (as the rejection) for a `continuation` refused; nothing ran then.
 * @throws {SourceError} (as the rejection) when a response's stream fails midway; what `request` throws.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * import { runAnthropicLoop, stepCountIs, toAnthropicTools } from 'toolstream/anthropic';
 *
 * const client = new Anthropic();
 * const request = (messages: Anthropic.MessageParam[]) =>
 *   client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 4096, tools: toAnthropicTools(pipeline), messages, stream: true });
 * let loop = await runAnthropicLoop(pipeline, { messages: [{ role: 'user', content: 'Tidy notes/' }], request, turn: 'conv-1', stopWhen: stepCountIs(10) });
 * if (loop.outcome === 'suspended') {
 *   const answers = loop.pending.map((approval) => ({ token: approval.token, answer: 'allowed-once' as const }));
 *   loop = await runAnthropicLoop(pipeline, { messages: loop.messages, request, turn: 'conv-1', continuation: loop.continuation, answers });
 * }
 * ```
 */
export function runAnthropicLoop(pipeline: Pipeline, options: AnthropicLoopOptions): Promise<AnthropicLoop> {
  const { request, signal, secret } = options;
  return driveLoop<MessageParam, AnthropicTurn>(options, {
    where: 'runAnthropicLoop',
    run: async (messages, step, turn) => {
      const events = await request([...messages], { step, signal });
      return runAnthropicTurn(pipeline, events, { step, secret, ...(turn === undefined ? {} : { turn }), ...(signal === undefined ? {} : { signal }) });
    },
    resume: (continuation, answers) => continueAnthropicTurn(pipeline, continuation, { answers, secret, ...(signal === undefined ? {} : { signal }) }),
    messagesOf: (turn) => turn.messages,
  });
}
