import { tap } from 'rxjs';
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionChunk,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import type { Observable } from 'rxjs';
import type { Pipeline, RunOptions } from '../../types/pipeline.js';
import type { ToolCall } from '../../types/toolCall.js';
import type { ToolResult } from '../../types/toolResult.js';
import { argumentsText } from './argumentsText.js';
import { toOpenAIChatToolMessages } from './chatFormat.js';
import { firstChoice, readOpenAIChatCalls } from './chatStream.js';

/**
 * One Chat Completions response, run: its tool calls' results and the messages that carry the turn
 * into the next request. What {@link runOpenAIChatTurn} resolves to.
 *
 * @example
 * ```ts
 * const turn: OpenAIChatTurn = await runOpenAIChatTurn(pipeline, stream);
 * messages.push(...turn.messages);
 * if (turn.done) console.log(turn.text);
 * ```
 */
export interface OpenAIChatTurn {
  /** One result per tool call, in the model's order. Empty when the model called no tool. */
  readonly results: readonly ToolResult[];
  /**
   * The assistant message: the text (`content`, `null` when there is none beside the calls), a
   * `refusal` when one was streamed, and `tool_calls` — exactly the calls in `results`, in that order,
   * with the arguments as the model sent them (cut off ones as far as they came). No `tool_calls` field
   * when there were none (OpenAI rejects an empty list).
   */
  readonly message: ChatCompletionAssistantMessageParam;
  /** One `tool` message per call, in order (see `toOpenAIChatToolMessages`). */
  readonly toolMessages: ChatCompletionToolMessageParam[];
  /**
   * What to append to the conversation: `message` (unless the response was empty), then
   * `toolMessages`.
   */
  readonly messages: (ChatCompletionAssistantMessageParam | ChatCompletionToolMessageParam)[];
  /** The text the model wrote (`''` when none). */
  readonly text: string;
  /** Choice 0's `finish_reason` (`'tool_calls'`, `'stop'`, `'length'`, …); `undefined` when none came. */
  readonly finishReason: string | undefined;
  /** Whether the model is done: it called no tool. Stop the loop here. */
  readonly done: boolean;
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
 * @param pipeline The pipeline that runs the calls (one per process; each turn is a `run()` of it).
 * @param chunks The response's stream.
 * @param options Passed to `pipeline.run()`: `signal` stops the turn, and every call still gets a result.
 * @returns The turn, once every call has its result and the stream has ended.
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
  options?: RunOptions,
): Promise<OpenAIChatTurn> {
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
  const results = await pipeline.run(readOpenAIChatCalls(chunks, read).pipe(tap((call) => calls.push(call))), options);

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
  const toolMessages = toOpenAIChatToolMessages(results);
  const empty = text === '' && refusal === '' && toolCalls.length === 0;
  return {
    results,
    message,
    toolMessages,
    messages: [...(empty ? [] : [message]), ...toolMessages],
    text,
    finishReason,
    done: results.length === 0,
  };
}
