import type { Pipeline, RunOptions } from '../../types/pipeline.js';
import type { ToolResult } from '../../types/toolResult.js';
import { AssistantMessageAssembler, type AnthropicAssistantMessage } from './assistantMessage.js';
import type { AnthropicEventSource } from './events.js';
import { readAnthropicCalls } from './fromAnthropicStream.js';
import { toAnthropicToolResults, type AnthropicToolResultMessage } from './toAnthropicToolResults.js';

/**
 * One model response, run: its tool calls' results and the messages that carry the turn into the next
 * request. What {@link runAnthropicTurn} resolves to.
 *
 * @example
 * ```ts
 * const turn: AnthropicTurn = await runAnthropicTurn(pipeline, stream);
 * messages.push(...turn.messages);
 * if (turn.done) console.log(turn.text);
 * ```
 */
export interface AnthropicTurn {
  /**
   * One result per `tool_use` block, in the model's order. Empty when the model called no tool. A block
   * repeated in its message (in `message_start` and streamed too, or replayed) is one call, answered
   * once; a later message of the same source that reuses an id holds a new call, answered `duplicate_id`
   * here but left out of `message` and `toolResults` (Anthropic takes each `tool_use` id once).
   */
  readonly results: readonly ToolResult[];
  /**
   * The assistant message as the model streamed it, assembled from the same events: text (empty text
   * blocks left out, as the API rejects them), thinking with its signature, and every `tool_use` block
   * whose call is in `results` (a block whose arguments were cut off or malformed has `input: {}`).
   */
  readonly message: AnthropicAssistantMessage;
  /** The user message with one `tool_result` per `tool_use` id, in order; `undefined` when there were no calls. */
  readonly toolResults: AnthropicToolResultMessage | undefined;
  /**
   * What to append to the conversation: `message` (unless it has no content: the API rejects an empty
   * assistant message), then `toolResults` when there are any. Never an empty message.
   */
  readonly messages: (AnthropicAssistantMessage | AnthropicToolResultMessage)[];
  /** The text the model wrote, its text blocks one per line (`''` when none). */
  readonly text: string;
  /** Why the model stopped: `'tool_use'`, `'end_turn'`, `'max_tokens'`, `'pause_turn'`, …, as reported. */
  readonly stopReason: string | undefined;
  /**
   * Whether the model is done: it called no tool and did not pause (`'pause_turn'`, where Anthropic asks
   * for the assistant message back to let the model go on). Stop the loop here.
   */
  readonly done: boolean;
}

/**
 * Runs one streamed Anthropic response through the pipeline and assembles what the next request
 * needs, reading the stream once: each call starts the moment its block is complete, while the model
 * streams the rest (as with `fromAnthropicStream`), and the assistant message is assembled from the
 * same events, so a `messages.create({ stream: true })` stream — which can be iterated only once —
 * serves both. An agent loop is then: request, `runAnthropicTurn`, push `turn.messages`, stop when
 * `turn.done`.
 *
 * Every call gets exactly one `tool_result`, in order, all in the one user message after the
 * assistant message and before any text, as Anthropic requires; a response without calls adds no user
 * message (Anthropic rejects an empty one). A call cut off by `max_tokens` is answered too
 * (`incomplete_args`, asking the model to send it again), so the loop goes on.
 *
 * Either SDK reader works, and any other source `fromAnthropicStream` takes: `client.messages.create({
 * …, stream: true })` answers a call whose JSON is malformed with its own `invalid_json` result, while
 * `client.messages.stream()` fails the whole stream on it (see `fromAnthropicStream`). One response
 * per call: a source that carries several messages gives their blocks in one message.
 *
 * @param pipeline The pipeline that runs the calls (one per process; each turn is a `run()` of it).
 * @param events The response's stream.
 * @param options Passed to `pipeline.run()`: `signal` stops the turn, and every call still gets a result.
 * @returns The turn, once every call has its result and the stream has ended.
 * @throws {SourceError} (as a rejection) when the stream fails midway, with the results so far.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * import { runAnthropicTurn, toAnthropicTools } from 'toolstream/anthropic';
 *
 * const client = new Anthropic(); // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
 * const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Summarise the TODOs in notes/' }];
 * for (let step = 0; step < 20; step++) {
 *   const stream = await client.messages.create({
 *     model: 'claude-sonnet-4-6', max_tokens: 4096, tools: toAnthropicTools(pipeline), messages, stream: true,
 *   });
 *   const turn = await runAnthropicTurn(pipeline, stream);
 *   messages.push(...turn.messages);
 *   if (turn.done) break;
 * }
 * ```
 */
export async function runAnthropicTurn(pipeline: Pipeline, events: AnthropicEventSource, options?: RunOptions): Promise<AnthropicTurn> {
  const assembler = new AssistantMessageAssembler();
  const results = await pipeline.run(readAnthropicCalls(events, (event) => assembler.push(event)), options);
  const message = assembler.message();
  const stopReason = assembler.stopReason;
  const toolResults = results.length > 0 ? toAnthropicToolResults(firstPerId(results)) : undefined;
  const messages: AnthropicTurn['messages'] = message.content.length > 0 ? [message] : [];
  if (toolResults !== undefined) messages.push(toolResults);
  return {
    results,
    message,
    toolResults,
    messages,
    text: assembler.text(),
    stopReason,
    done: results.length === 0 && stopReason !== 'pause_turn',
  };
}

/**
 * The first result of each call id. A message of the source that reused an id of an earlier one holds a
 * new call, answered `duplicate_id` in `results`; the assistant message holds that id's block once, so
 * its one `tool_result` is the first call's.
 */
function firstPerId(results: readonly ToolResult[]): ToolResult[] {
  const seen = new Set<string>();
  return results.filter((result) => {
    if (seen.has(result.id)) return false;
    seen.add(result.id);
    return true;
  });
}
