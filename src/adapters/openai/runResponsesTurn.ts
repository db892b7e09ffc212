import { tap, type Observable } from 'rxjs';
import type { ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { Pipeline, RunOptions } from '../../types/pipeline.js';
import { IncompleteArguments } from '../../util/incompleteArguments.js';
import { isObject, isRecord } from '../../util/validate.js';
import type { ToolCall } from '../../types/toolCall.js';
import type { ToolResult } from '../../types/toolResult.js';
import { argumentsText } from './argumentsText.js';
import { customOption, type OpenAICustomTools, type OpenAIResponsesOptions } from './customTools.js';
import { toOpenAIResponsesInput } from './responsesFormat.js';
import { readOpenAIResponsesCalls } from './responsesStream.js';

/**
 * Options of {@link runOpenAIResponsesTurn}: the run's (`signal`) and the free-form tools (`custom`).
 *
 * @example
 * ```ts
 * const options: OpenAIResponsesTurnOptions = { custom: openAICustomTools([applyPatch]), signal };
 * ```
 */
export interface OpenAIResponsesTurnOptions extends RunOptions, OpenAIResponsesOptions {}

/**
 * One Responses API response, run: its tool calls' results and the input items that carry the turn
 * into the next request. What {@link runOpenAIResponsesTurn} resolves to.
 *
 * @example
 * ```ts
 * const turn: OpenAIResponsesTurn = await runOpenAIResponsesTurn(pipeline, stream);
 * input.push(...turn.items);
 * if (turn.done) console.log(turn.text);
 * ```
 */
export interface OpenAIResponsesTurn {
  /** One result per client tool call, in the model's order. Empty when the model called no tool. */
  readonly results: readonly ToolResult[];
  /**
   * The response's output items, as the server reported them at its end (`response.completed` /
   * `response.incomplete`; else the items it finished), to send back as input: messages, reasoning,
   * and every call in `results` (a call the stream cut off before its item came is added as the
   * `function_call` item the model had begun).
   */
  readonly output: ResponseInputItem[];
  /** One `function_call_output` (or `custom_tool_call_output`) per call, in order (see `toOpenAIResponsesInput`). */
  readonly toolOutputs: ResponseInputItem[];
  /**
   * What to append to the next request's `input` when you keep the conversation yourself: `output`,
   * then `toolOutputs`. (With `previous_response_id: turn.responseId`, send `toolOutputs` alone.)
   */
  readonly items: ResponseInputItem[];
  /** The text of the response's `message` items (`''` when none). */
  readonly text: string;
  /** The response's id, for `previous_response_id`. */
  readonly responseId: string | undefined;
  /** Whether the model is done: it called no tool. Stop the loop here. */
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
 * @param pipeline The pipeline that runs the calls (one per process; each turn is a `run()` of it).
 * @param events The response's stream.
 * @param options `signal` for `pipeline.run()`; `custom` as for `fromOpenAIResponsesStream`.
 * @returns The turn, once every call has its result and the response has ended.
 * @throws {ConfigError} (synchronously) when `options.custom` is not from `openAICustomTools`.
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
  return runTurn(pipeline, events, custom, options?.signal);
}

async function runTurn(
  pipeline: Pipeline,
  events: AsyncIterable<ResponseStreamEvent> | Observable<ResponseStreamEvent>,
  custom: OpenAICustomTools | undefined,
  signal: AbortSignal | undefined,
): Promise<OpenAIResponsesTurn> {
  const collected = new OutputItems();
  const calls: ToolCall[] = [];
  const calls$ = readOpenAIResponsesCalls(events, custom, (event) => collected.push(event)).pipe(tap((call) => calls.push(call)));
  const results = await pipeline.run(calls$, signal === undefined ? undefined : { signal });
  const output = collected.items(calls, custom);
  const toolOutputs = toOpenAIResponsesInput(results, custom === undefined ? {} : { custom }) as ResponseInputItem[];
  return {
    results,
    output,
    toolOutputs,
    items: [...output, ...toolOutputs],
    text: textOf(output),
    responseId: collected.responseId,
    done: results.length === 0,
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
