import type { JsonValue } from '../../types/json.js';
import type { Pipeline, RunOptions } from '../../types/pipeline.js';
import type { ToolResult } from '../../types/toolResult.js';
import { checkSecret, continueDurableTurn, durableFields, readInFull, settleRun, type ContinuationOptions, type ContinueOptions, type DurableTurnFields, type Settlement, type TurnPlace } from '../loop/index.js';
import { AssistantMessageAssembler, type AnthropicAssistantMessage } from './assistantMessage.js';
import type { AnthropicEventSource } from './events.js';
import { readAnthropicCalls } from './fromAnthropicStream.js';
import { toAnthropicToolResults, type AnthropicToolResultMessage } from './toAnthropicToolResults.js';

/**
 * Options of {@link runAnthropicTurn}: the run's (`signal`, `turn`), the step it is in its loop, and
 * the secret its continuation is signed with (the pipeline's `approvalSecret` unless given).
 *
 * @example
 * ```ts
 * const options: AnthropicTurnOptions = { turn: `${conversationId}/${step}`, step };
 * ```
 */
export interface AnthropicTurnOptions extends RunOptions, ContinuationOptions {
  /** The response's step in its loop, carried by its continuation. @default 1 */
  readonly step?: number;
}

/**
 * One model response, run: its tool calls' results and the messages that carry the turn into the next
 * request. What {@link runAnthropicTurn} and {@link continueAnthropicTurn} resolve to. On a journaled
 * pipeline (`{ turn }`), `outcome` says whether every call was answered (`'next'`, `'done'`) or the
 * turn stopped before (`'suspended'` for approval, `'turn_leased'`, `'lease_lost'`); then `messages` is
 * empty and `continuation` goes on with it.
 *
 * @example
 * ```ts
 * const turn: AnthropicTurn = await runAnthropicTurn(pipeline, stream);
 * messages.push(...turn.messages);
 * if (turn.done) console.log(turn.text);
 * ```
 */
export interface AnthropicTurn extends DurableTurnFields {
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
  /** The user message with one `tool_result` per `tool_use` id, in order; `undefined` when there were no calls, or not every call was answered. */
  readonly toolResults: AnthropicToolResultMessage | undefined;
  /**
   * What to append to the conversation: `message` (unless it has no content: the API rejects an empty
   * assistant message), then `toolResults` when there are any. Never an empty message. Empty when the
   * turn stopped before every call was answered (`outcome` other than `'next'`, `'done'`).
   */
  readonly messages: (AnthropicAssistantMessage | AnthropicToolResultMessage)[];
  /** The text the model wrote, its text blocks one per line (`''` when none). */
  readonly text: string;
  /** Why the model stopped: `'tool_use'`, `'end_turn'`, `'max_tokens'`, `'pause_turn'`, …, as reported. */
  readonly stopReason: string | undefined;
  /**
   * Whether the model is done: it called no tool and did not pause (`'pause_turn'`, where Anthropic asks
   * for the assistant message back to let the model go on). Stop the loop here. (`outcome: 'done'`.)
   */
  readonly done: boolean;
}

/** What a continuation of an Anthropic turn carries: the assistant message as streamed, and why it stopped. */
interface AnthropicState {
  readonly message: AnthropicAssistantMessage;
  readonly stopReason: string | undefined;
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
 * On a journaled pipeline, run with `{ turn }`: a call an approver suspends does not fail the turn —
 * it resolves with `outcome: 'suspended'`, every result so far, the approvals it waits for
 * (`pending`), and a `continuation` that {@link continueAnthropicTurn} takes with the answers, in any
 * process. A turn another process drives resolves with `'turn_leased'` (nothing ran), one taken over
 * midway with `'lease_lost'`; neither has anything to send to the model.
 *
 * @param pipeline The pipeline that runs the calls (one per process; each turn is a `run()` of it).
 * @param events The response's stream.
 * @param options Passed to `pipeline.run()`: `signal` stops the turn, and every call still gets a result;
 *   `turn` makes it durable. `step` and `secret` go into its continuation.
 * @returns The turn, once every call has its result (or is suspended) and the stream has ended.
 * @throws {ConfigError} (as a rejection, before anything runs) for a `secret` under 32 bytes.
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
export async function runAnthropicTurn(pipeline: Pipeline, events: AnthropicEventSource, options?: AnthropicTurnOptions): Promise<AnthropicTurn> {
  checkSecret('runAnthropicTurn', options?.secret);
  const assembler = new AssistantMessageAssembler();
  const { step = 1, secret, ...runOptions } = options ?? {};
  const calls = readAnthropicCalls(events, (event) => assembler.push(event));
  const settled = await settleRun(pipeline, runOptions.turn, pipeline.run(calls, runOptions));
  const state = { message: assembler.message(), stopReason: assembler.stopReason };
  const known = readInFull(settled);
  return anthropicTurn(pipeline, settled, state, { turn: runOptions.turn, step, known, secret });
}

/**
 * Goes on with an Anthropic turn that stopped (`outcome` `'suspended'`, `'turn_leased'`, `'lease_lost'`),
 * in any process, from a pipeline with the same journal store and secret: checks the continuation (as
 * received: parsed JSON), consumes it — a second submit of it is refused with `continuation_used`,
 * running nothing — resumes the turn with the answers (`pipeline.resume`), and resolves to the turn as
 * {@link runAnthropicTurn} would have: for `'next'`, `messages` is the assistant message, then the one
 * user message with every call's `tool_result`, in the model's order, ready for the next request. A
 * call still unanswered leaves it `'suspended'`, with a fresh continuation.
 *
 * @throws {ConfigError} (as a rejection, before anything runs) for a `secret` under 32 bytes.
 * @throws {ContinuationError} (as the rejection) for a continuation refused; nothing ran then.
 * @throws {DurableTurnError} (as the rejection) as `pipeline.resume` does.
 *
 * @example
 * ```ts
 * import { continueAnthropicTurn } from 'toolstream/anthropic';
 *
 * // POST /approve { continuation, answers }: the browser had the continuation and the pending approvals.
 * const turn = await continueAnthropicTurn(pipeline, body.continuation, { answers: body.answers });
 * if (turn.outcome === 'next') messages.push(...turn.messages); // then request the next response
 * ```
 */
export async function continueAnthropicTurn(pipeline: Pipeline, continuation: unknown, options?: ContinueOptions): Promise<AnthropicTurn> {
  checkSecret('continueAnthropicTurn', options?.secret);
  const { continuation: verified, settled } = await continueDurableTurn(pipeline, continuation, 'anthropic', options);
  const state = verified.state as unknown as { readonly message: AnthropicAssistantMessage; readonly stopReason: string | null };
  return anthropicTurn(pipeline, settled, { message: state.message, stopReason: state.stopReason ?? undefined }, { turn: verified.turn, step: verified.step, known: true, secret: options?.secret });
}

/** The turn, from how its run ended and the assistant message. */
function anthropicTurn(
  pipeline: Pipeline,
  settled: Settlement,
  { message, stopReason }: AnthropicState,
  facts: TurnPlace,
): AnthropicTurn {
  const { results } = settled;
  const answered = settled.kind === 'answered';
  const toolResults = answered && results.length > 0 ? toAnthropicToolResults(firstPerId(results)) : undefined;
  const messages: AnthropicTurn['messages'] = answered && message.content.length > 0 ? [message] : [];
  if (toolResults !== undefined) messages.push(toolResults);
  const done = answered && results.length === 0 && stopReason !== 'pause_turn';
  const state = facts.known ? ({ message, stopReason: stopReason ?? null } as unknown as JsonValue) : undefined;
  return {
    results,
    message,
    toolResults,
    messages,
    text: textOf(message),
    stopReason,
    done,
    ...durableFields(pipeline, settled, { provider: 'anthropic', turn: facts.turn, step: facts.step, state, done, secret: facts.secret }),
  };
}

/** The text the model wrote: its non-empty text blocks, one per line. */
function textOf(message: AnthropicAssistantMessage): string {
  return message.content
    .flatMap((block) => (block.type === 'text' && block.text !== '' ? [block.text] : []))
    .join('\n');
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
