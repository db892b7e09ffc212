import { tap, type Observable } from 'rxjs';
import type { ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { JsonValue } from '../../types/json.js';
import type { Pipeline, RunOptions } from '../../types/pipeline.js';
import { IncompleteArguments } from '../../util/incompleteArguments.js';
import { isObject, isRecord } from '../../util/validate.js';
import type { ToolCall } from '../../types/toolCall.js';
import type { ToolResult } from '../../types/toolResult.js';
import { argumentsText } from './argumentsText.js';
import { customOption, type OpenAICustomTools, type OpenAIResponsesOptions } from './customTools.js';
import { toOpenAIResponsesInput } from './responsesFormat.js';
import { readOpenAIResponsesCalls } from './responsesStream.js';
import { checkSecret, continueDurableTurn, durableFields, readInFull, settleRun, type ContinuationOptions, type ContinueOptions, type DurableTurnFields, type Settlement, type TurnPlace } from '../loop/index.js';

/**
 * Options of {@link runOpenAIResponsesTurn}: the run's (`signal`, `turn`), the free-form tools
 * (`custom`), the step it is in its loop and the secret its continuation is signed with (the
 * pipeline's `approvalSecret` unless given).
 *
 * @example
 * ```ts
 * const options: OpenAIResponsesTurnOptions = { custom: openAICustomTools([applyPatch]), signal };
 * ```
 */
export interface OpenAIResponsesTurnOptions extends RunOptions, OpenAIResponsesOptions, ContinuationOptions {
  /** The response's step in its loop, carried by its continuation. @default 1 */
  readonly step?: number;
}

/**
 * Options of {@link continueOpenAIResponsesTurn}: the answers, the signal, and the free-form tools
 * (`custom`, as the turn was run with: their outputs are `custom_tool_call_output` items).
 *
 * @example
 * ```ts
 * const options: ContinueOpenAIResponsesOptions = { answers, custom: openAICustomTools([applyPatch]) };
 * ```
 */
export interface ContinueOpenAIResponsesOptions extends ContinueOptions, OpenAIResponsesOptions {}

/** What a continuation of a Responses turn carries: the response's output items and its id. */
interface ResponsesState {
  readonly output: ResponseInputItem[];
  readonly responseId: string | null;
}

/**
 * One Responses API response, run: its tool calls' results and the input items that carry the turn
 * into the next request. What {@link runOpenAIResponsesTurn} and {@link continueOpenAIResponsesTurn}
 * resolve to. On a journaled pipeline (`{ turn }`), `outcome` says whether every call was answered
 * (`'next'`, `'done'`) or the turn stopped before (`'suspended'`, `'turn_leased'`, `'lease_lost'`);
 * then `items` is empty and `continuation` goes on with it.
 *
 * @example
 * ```ts
 * const turn: OpenAIResponsesTurn = await runOpenAIResponsesTurn(pipeline, stream);
 * input.push(...turn.items);
 * if (turn.done) console.log(turn.text);
 * ```
 */
export interface OpenAIResponsesTurn extends DurableTurnFields {
  /** One result per client tool call, in the model's order. Empty when the model called no tool. */
  readonly results: readonly ToolResult[];
  /**
   * The response's output items, as the server reported them at its end (`response.completed` /
   * `response.incomplete`; else the items it finished), to send back as input: messages, reasoning,
   * and every call in `results` (a call the stream cut off before its item came is added as the
   * `function_call` item the model had begun).
   */
  readonly output: ResponseInputItem[];
  /**
   * One `function_call_output` (or `custom_tool_call_output`) per call, in order (see
   * `toOpenAIResponsesInput`); empty unless every call was answered.
   */
  readonly toolOutputs: ResponseInputItem[];
  /**
   * What to append to the next request's `input` when you keep the conversation yourself: `output`,
   * then `toolOutputs`. (With `previous_response_id: turn.responseId`, send `toolOutputs` alone.)
   * Empty when the turn stopped before every call was answered.
   */
  readonly items: ResponseInputItem[];
  /** The text of the response's `message` items (`''` when none). */
  readonly text: string;
  /** The response's id, for `previous_response_id`. */
  readonly responseId: string | undefined;
  /** Whether the model is done: it called no tool. Stop the loop here. (`outcome: 'done'`.) */
  readonly done: boolean;
}

/**
 * Runs one streamed Responses API response through the pipeline and collects what the next request
 * needs, reading the stream once: each call starts as soon as its arguments are done (as with
 * `fromOpenAIResponsesStream`), and the output items come from the same events. Every call gets
 * exactly one output item, in order, and every call answered is among the output items sent back.
 *
 * An agent loop is then: request, `runOpenAIResponsesTurn`, push `turn.items`, stop when `turn.done` —
 * stateless, so it works with servers that keep no responses and with `store: false` (where a reasoning
 * model's reasoning items go back only with `include: ['reasoning.encrypted_content']`). Pass `await
 * client.responses.create({ …, stream: true })`, `client.responses.stream()` or any source
 * `fromOpenAIResponsesStream` takes.
 *
 * On a journaled pipeline, run with `{ turn }`: a call an approver suspends does not fail the turn —
 * it resolves with `outcome: 'suspended'`, every result so far, the approvals it waits for
 * (`pending`), and a `continuation` that {@link continueOpenAIResponsesTurn} takes with the answers, in
 * any process. A turn another process drives resolves with `'turn_leased'` (nothing ran), one taken
 * over midway with `'lease_lost'`; neither has anything to send to the model.
 *
 * @param pipeline The pipeline that runs the calls (one per process; each turn is a `run()` of it).
 * @param events The response's stream.
 * @param options `signal` and `turn` for `pipeline.run()`; `custom` as for `fromOpenAIResponsesStream`;
 *   `step` and `secret` go into its continuation.
 * @returns The turn, once every call has its result (or is suspended) and the response has ended.
 * @throws {ConfigError} (synchronously) when `options.custom` is not from `openAICustomTools`, or
 *   `options.secret` is under 32 bytes.
 * @throws {SourceError} (as a rejection) when the stream fails midway (`response.failed`, `error`),
 *   with the results so far.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * import type { ResponseInputItem } from 'openai/resources/responses/responses';
 * import { runOpenAIResponsesTurn, toOpenAIResponsesTools } from 'toolstream/openai';
 *
 * const client = new OpenAI(); // OPENAI_API_KEY, OPENAI_BASE_URL
 * const input: ResponseInputItem[] = [{ role: 'user', content: 'Summarise the TODOs in notes/' }];
 * for (let step = 0; step < 20; step++) {
 *   const stream = await client.responses.create({ model: 'gpt-4.1', input, tools: toOpenAIResponsesTools(pipeline), stream: true });
 *   const turn = await runOpenAIResponsesTurn(pipeline, stream);
 *   input.push(...turn.items);
 *   if (turn.done) break;
 * }
 * ```
 */
export function runOpenAIResponsesTurn(
  pipeline: Pipeline,
  events: AsyncIterable<ResponseStreamEvent> | Observable<ResponseStreamEvent>,
  options?: OpenAIResponsesTurnOptions,
): Promise<OpenAIResponsesTurn> {
  // Checked now, before anything is read: a misconfiguration throws here rather than rejecting.
  const custom = customOption('runOpenAIResponsesTurn', options);
  checkSecret('runOpenAIResponsesTurn', options?.secret);
  return runTurn(pipeline, events, custom, options ?? {});
}

async function runTurn(
  pipeline: Pipeline,
  events: AsyncIterable<ResponseStreamEvent> | Observable<ResponseStreamEvent>,
  custom: OpenAICustomTools | undefined,
  { signal, turn, step = 1, secret }: OpenAIResponsesTurnOptions,
): Promise<OpenAIResponsesTurn> {
  const collected = new OutputItems();
  const calls: ToolCall[] = [];
  const calls$ = readOpenAIResponsesCalls(events, custom, (event) => collected.push(event)).pipe(tap((call) => calls.push(call)));
  const runOptions: RunOptions = { ...(signal === undefined ? {} : { signal }), ...(turn === undefined ? {} : { turn }) };
  const settled = await settleRun(pipeline, turn, pipeline.run(calls$, runOptions));
  const state: ResponsesState = { output: collected.items(calls, custom), responseId: collected.responseId ?? null };
  const known = readInFull(settled);
  return responsesTurn(pipeline, settled, state, custom, { turn, step, known, secret });
}

/**
 * Goes on with a Responses turn that stopped (`outcome` `'suspended'`, `'turn_leased'`, `'lease_lost'`),
 * in any process, from a pipeline with the same journal store and secret: checks the continuation (as
 * received: parsed JSON), consumes it — a second submit of it is refused with `continuation_used`,
 * running nothing — resumes the turn with the answers (`pipeline.resume`), and resolves to the turn as
 * {@link runOpenAIResponsesTurn} would have: for `'next'`, `items` is the response's output items, then
 * one output item per call, in the model's order. A call still unanswered leaves it `'suspended'`,
 * with a fresh continuation. Give `custom` as the turn was run with.
 *
 * @throws {ContinuationError} (as the rejection) for a continuation refused; nothing ran then.
 * @throws {DurableTurnError} (as the rejection) as `pipeline.resume` does.
 * @throws {ConfigError} (synchronously) when `options.custom` is not from `openAICustomTools`, or
 *   `options.secret` is under 32 bytes.
 *
 * @example
 * ```ts
 * import { continueOpenAIResponsesTurn } from 'toolstream/openai';
 *
 * const turn = await continueOpenAIResponsesTurn(pipeline, body.continuation, { answers: body.answers });
 * if (turn.outcome === 'next') input.push(...turn.items); // then request the next response
 * ```
 */
export function continueOpenAIResponsesTurn(pipeline: Pipeline, continuation: unknown, options?: ContinueOpenAIResponsesOptions): Promise<OpenAIResponsesTurn> {
  const custom = customOption('continueOpenAIResponsesTurn', options);
  checkSecret('continueOpenAIResponsesTurn', options?.secret);
  return continueDurableTurn(pipeline, continuation, 'openai-responses', options).then(({ continuation: verified, settled }) =>
    responsesTurn(pipeline, settled, verified.state as unknown as ResponsesState, custom, { turn: verified.turn, step: verified.step, known: true, secret: options?.secret }),
  );
}

/** The turn, from how its run ended and the response's output items. */
function responsesTurn(
  pipeline: Pipeline,
  settled: Settlement,
  state: ResponsesState,
  custom: OpenAICustomTools | undefined,
  facts: TurnPlace,
): OpenAIResponsesTurn {
  const { results } = settled;
  const { output } = state;
  const answered = settled.kind === 'answered';
  const toolOutputs = answered ? (toOpenAIResponsesInput(results, custom === undefined ? {} : { custom }) as ResponseInputItem[]) : [];
  const done = answered && results.length === 0;
  return {
    results,
    output,
    toolOutputs,
    items: answered ? [...output, ...toolOutputs] : [],
    text: textOf(output),
    responseId: state.responseId ?? undefined,
    done,
    ...durableFields(pipeline, settled, { provider: 'openai-responses', turn: facts.turn, step: facts.step, state: facts.known ? (state as unknown as JsonValue) : undefined, done, secret: facts.secret }),
  };
}

/** The output items of one response, from its events. */
class OutputItems {
  /** Items finished (`response.output_item.done`), by output index. */
  readonly #done = new Map<number, Record<string, unknown>>();
  /** The output of the response's terminal event, when it carried one. */
  #final: Record<string, unknown>[] | undefined;
  responseId: string | undefined;

  push(event: unknown): void {
    if (!isObject(event)) return;
    const response = event['response'];
    if (isObject(response) && typeof response['id'] === 'string' && response['id'] !== '') this.responseId = response['id'];
    const type = event['type'];
    if (type === 'response.output_item.done' && isRecord(event['item'])) {
      const index = typeof event['output_index'] === 'number' ? event['output_index'] : this.#done.size;
      this.#done.set(index, event['item'] as Record<string, unknown>);
    } else if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      const output = isObject(response) ? response['output'] : undefined;
      if (Array.isArray(output) && output.length > 0) this.#final = (output as unknown[]).filter(isRecord) as Record<string, unknown>[];
    }
  }

  /** The items to send back: the final output (else the finished items), with every emitted call among them. */
  items(calls: readonly ToolCall[], custom: OpenAICustomTools | undefined): ResponseInputItem[] {
    const items = this.#final ?? [...this.#done].sort(([a], [b]) => a - b).map(([, item]) => item);
    const present = new Set(items.map((item) => item['call_id']));
    const missing = calls.filter((call) => !present.has(call.id)).map((call) => callItem(call, custom));
    return [...items, ...missing] as unknown as ResponseInputItem[];
  }
}

/** The item of a call whose item never came (the stream was cut off): as far as the model got. */
function callItem(call: ToolCall, custom: OpenAICustomTools | undefined): Record<string, unknown> {
  if (custom?.has(call.name) !== true) {
    return { type: 'function_call', call_id: call.id, name: call.name, arguments: argumentsText(call.args) };
  }
  // A free-form call is emitted with its text JSON-encoded (or cut off, with the raw text so far).
  const input = call.args instanceof IncompleteArguments ? call.args.partialText : (JSON.parse(argumentsText(call.args)) as unknown);
  return { type: 'custom_tool_call', call_id: call.id, name: call.name, input };
}

/** The text of the `message` items' `output_text` parts. */
function textOf(items: readonly unknown[]): string {
  const texts: string[] = [];
  for (const item of items) {
    if (!isObject(item) || item['type'] !== 'message' || !Array.isArray(item['content'])) continue;
    for (const part of item['content'] as unknown[]) {
      if (isObject(part) && part['type'] === 'output_text' && typeof part['text'] === 'string') texts.push(part['text']);
    }
  }
  return texts.join('\n');
}
