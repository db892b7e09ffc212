import { tap } from 'rxjs';
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionChunk,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import type { Observable } from 'rxjs';
import type { JsonValue } from '../../types/json.js';
import type { Pipeline, RunOptions } from '../../types/pipeline.js';
import type { ToolCall } from '../../types/toolCall.js';
import type { ToolResult } from '../../types/toolResult.js';
import { checkSecret, continueDurableTurn, durableFields, readInFull, settleRun, type ContinuationOptions, type ContinueOptions, type DurableTurnFields, type Settlement, type TurnPlace } from '../loop/index.js';
import { argumentsText } from './argumentsText.js';
import { toOpenAIChatToolMessages } from './chatFormat.js';
import { firstChoice, readOpenAIChatCalls } from './chatStream.js';

/**
 * Options of {@link runOpenAIChatTurn}: the run's (`signal`, `turn`), the step it is in its loop, and
 * the secret its continuation is signed with (the pipeline's `approvalSecret` unless given).
 *
 * @example
 * ```ts
 * const options: OpenAIChatTurnOptions = { turn: `${conversationId}/${step}`, step };
 * ```
 */
export interface OpenAIChatTurnOptions extends RunOptions, ContinuationOptions {
  /** The response's step in its loop, carried by its continuation. @default 1 */
  readonly step?: number;
}

/**
 * One Chat Completions response, run: its tool calls' results and the messages that carry the turn
 * into the next request. What {@link runOpenAIChatTurn} and {@link continueOpenAIChatTurn} resolve to.
 * On a journaled pipeline (`{ turn }`), `outcome` says whether every call was answered (`'next'`,
 * `'done'`) or the turn stopped before (`'suspended'`, `'turn_leased'`, `'lease_lost'`); then
 * `messages` is empty and `continuation` goes on with it.
 *
 * @example
 * ```ts
 * const turn: OpenAIChatTurn = await runOpenAIChatTurn(pipeline, stream);
 * messages.push(...turn.messages);
 * if (turn.done) console.log(turn.text);
 * ```
 */
export interface OpenAIChatTurn extends DurableTurnFields {
  /** One result per tool call, in the model's order. Empty when the model called no tool. */
  readonly results: readonly ToolResult[];
  /**
   * The assistant message: the text (`content`, `null` when there is none beside the calls), a
   * `refusal` when one was streamed, and `tool_calls` — exactly the calls in `results`, in that order,
   * with the arguments as the model sent them (cut off ones as far as they came). No `tool_calls` field
   * when there were none (OpenAI rejects an empty list).
   */
  readonly message: ChatCompletionAssistantMessageParam;
  /** One `tool` message per call, in order (see `toOpenAIChatToolMessages`); empty unless every call was answered. */
  readonly toolMessages: ChatCompletionToolMessageParam[];
  /**
   * What to append to the conversation: `message` (unless the response was empty), then
   * `toolMessages`. Empty when the turn stopped before every call was answered.
   */
  readonly messages: (ChatCompletionAssistantMessageParam | ChatCompletionToolMessageParam)[];
  /** The text the model wrote (`''` when none). */
  readonly text: string;
  /** Choice 0's `finish_reason` (`'tool_calls'`, `'stop'`, `'length'`, …); `undefined` when none came. */
  readonly finishReason: string | undefined;
  /** Whether the model is done: it called no tool. Stop the loop here. (`outcome: 'done'`.) */
  readonly done: boolean;
}

/** What a continuation of a Chat Completions turn carries. */
interface ChatState {
  readonly message: ChatCompletionAssistantMessageParam;
  readonly finishReason: string | null;
}

/**
 * Runs one streamed Chat Completions response through the pipeline and assembles what the next request
 * needs, reading the stream once: each call starts as soon as its arguments are complete (as with
 * `fromOpenAIChatStream`), and the assistant message is built from the same chunks — its `tool_calls`
 * from the very calls the pipeline answered — so every `tool_call_id` gets exactly one `tool` message,
 * in order, also from servers whose chunks the SDK's own accumulator merges differently (Ollama sends
 * every call as `index: 0`) or rejects (no `finish_reason`).
 *
 * An agent loop is then: request, `runOpenAIChatTurn`, push `turn.messages`, stop when `turn.done`.
 * Pass `await client.chat.completions.create({ …, stream: true })`, `client.chat.completions.stream()`
 * or any source `fromOpenAIChatStream` takes. Only choice 0 is read (tool calling uses `n: 1`).
 *
 * On a journaled pipeline, run with `{ turn }`: a call an approver suspends does not fail the turn —
 * it resolves with `outcome: 'suspended'`, every result so far, the approvals it waits for
 * (`pending`), and a `continuation` that {@link continueOpenAIChatTurn} takes with the answers, in any
 * process. A turn another process drives resolves with `'turn_leased'` (nothing ran), one taken over
 * midway with `'lease_lost'`; neither has anything to send to the model.
 *
 * @param pipeline The pipeline that runs the calls (one per process; each turn is a `run()` of it).
 * @param chunks The response's stream.
 * @param options Passed to `pipeline.run()`: `signal` stops the turn, and every call still gets a result;
 *   `turn` makes it durable. `step` and `secret` go into its continuation.
 * @returns The turn, once every call has its result (or is suspended) and the stream has ended.
 * @throws {ConfigError} (as a rejection, before anything runs) for a `secret` under 32 bytes.
 * @throws {SourceError} (as a rejection) when the stream fails midway, with the results so far.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
 * import { runOpenAIChatTurn, toOpenAIChatTools } from 'toolstream/openai';
 *
 * const client = new OpenAI(); // OPENAI_API_KEY, OPENAI_BASE_URL
 * const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Summarise the TODOs in notes/' }];
 * for (let step = 0; step < 20; step++) {
 *   const stream = await client.chat.completions.create({ model: 'gpt-4.1', messages, tools: toOpenAIChatTools(pipeline), stream: true });
 *   const turn = await runOpenAIChatTurn(pipeline, stream);
 *   messages.push(...turn.messages);
 *   if (turn.done) break;
 * }
 * ```
 */
export async function runOpenAIChatTurn(
  pipeline: Pipeline,
  chunks: AsyncIterable<ChatCompletionChunk> | Observable<ChatCompletionChunk>,
  options?: OpenAIChatTurnOptions,
): Promise<OpenAIChatTurn> {
  checkSecret('runOpenAIChatTurn', options?.secret);
  const { step = 1, secret, ...runOptions } = options ?? {};
  let text = '';
  let refusal = '';
  let finishReason: string | undefined;
  const calls: ToolCall[] = [];
  const read = (chunk: ChatCompletionChunk) => {
    const choice = firstChoice(chunk);
    const delta = choice?.['delta'];
    if (typeof delta === 'object' && delta !== null) {
      const { content, refusal: refused } = delta as Record<string, unknown>;
      if (typeof content === 'string') text += content;
      if (typeof refused === 'string') refusal += refused;
    }
    const finish = choice?.['finish_reason'];
    if (typeof finish === 'string' && finish !== '') finishReason = finish;
  };
  const run = pipeline.run(readOpenAIChatCalls(chunks, read).pipe(tap((call) => calls.push(call))), runOptions);
  const settled = await settleRun(pipeline, runOptions.turn, run);

  const toolCalls = calls.map(
    (call): ChatCompletionMessageFunctionToolCall => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: argumentsText(call.args) },
    }),
  );
  const message: ChatCompletionAssistantMessageParam = { role: 'assistant', content: text !== '' ? text : toolCalls.length > 0 ? null : '' };
  if (refusal !== '') message.refusal = refusal;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const known = readInFull(settled);
  return chatTurn(pipeline, settled, { message, finishReason: finishReason ?? null }, { turn: runOptions.turn, step, known, secret });
}

/**
 * Goes on with a Chat Completions turn that stopped (`outcome` `'suspended'`, `'turn_leased'`,
 * `'lease_lost'`), in any process, from a pipeline with the same journal store and secret: checks the
 * continuation (as received: parsed JSON), consumes it — a second submit of it is refused with
 * `continuation_used`, running nothing — resumes the turn with the answers (`pipeline.resume`), and
 * resolves to the turn as {@link runOpenAIChatTurn} would have: for `'next'`, `messages` is the
 * assistant message with its `tool_calls`, then one `tool` message per call, in the model's order. A
 * call still unanswered leaves it `'suspended'`, with a fresh continuation.
 *
 * @throws {ConfigError} (as a rejection, before anything runs) for a `secret` under 32 bytes.
 * @throws {ContinuationError} (as the rejection) for a continuation refused; nothing ran then.
 * @throws {DurableTurnError} (as the rejection) as `pipeline.resume` does.
 *
 * @example
 * ```ts
 * import { continueOpenAIChatTurn } from 'toolstream/openai';
 *
 * const turn = await continueOpenAIChatTurn(pipeline, body.continuation, { answers: body.answers });
 * if (turn.outcome === 'next') messages.push(...turn.messages); // then request the next response
 * ```
 */
export async function continueOpenAIChatTurn(pipeline: Pipeline, continuation: unknown, options?: ContinueOptions): Promise<OpenAIChatTurn> {
  checkSecret('continueOpenAIChatTurn', options?.secret);
  const { continuation: verified, settled } = await continueDurableTurn(pipeline, continuation, 'openai-chat', options);
  return chatTurn(pipeline, settled, verified.state as unknown as ChatState, { turn: verified.turn, step: verified.step, known: true, secret: options?.secret });
}

/** The turn, from how its run ended and the assistant message. */
function chatTurn(
  pipeline: Pipeline,
  settled: Settlement,
  state: ChatState,
  facts: TurnPlace,
): OpenAIChatTurn {
  const { results } = settled;
  const { message } = state;
  const answered = settled.kind === 'answered';
  const toolMessages = answered ? toOpenAIChatToolMessages(results) : [];
  const text = typeof message.content === 'string' ? message.content : '';
  const empty = text === '' && message.refusal == null && (message.tool_calls ?? []).length === 0;
  const done = answered && results.length === 0;
  return {
    results,
    message,
    toolMessages,
    messages: answered ? [...(empty ? [] : [message]), ...toolMessages] : [],
    text,
    finishReason: state.finishReason ?? undefined,
    done,
    ...durableFields(pipeline, settled, { provider: 'openai-chat', turn: facts.turn, step: facts.step, state: facts.known ? (state as unknown as JsonValue) : undefined, done, secret: facts.secret }),
  };
}
