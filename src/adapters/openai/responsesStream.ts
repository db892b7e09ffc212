import { Observable } from 'rxjs';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { SourceReader } from '../../stream/sourceReader.js';
import type { ToolCall } from '../../types/toolCall.js';
import { customOption, type OpenAICustomTools, type OpenAIResponsesOptions } from './customTools.js';
import { ResponsesCallAssembler } from './responsesCallAssembler.js';

/**
 * Turns an OpenAI Responses API stream into tool calls, each emitted as soon as its arguments are
 * done, so the pipeline starts running it while the model is still streaming.
 *
 * Pass the SDK's stream — `client.responses.stream(...)` or `await client.responses.create({ ...,
 * stream: true })` — or any async iterable or Observable of `ResponseStreamEvent`s. A `function_call` item opens with
 * `response.output_item.added` (which brings its `call_id`, `name` and item `id`); its
 * `response.function_call_arguments.delta` events are matched to it by `item_id` (or by
 * `output_index` when either side lacks an item id), so interleaved calls are told apart. The call is
 * emitted once, as `{ id: call_id, name, args }` with `args` the arguments text, at whichever comes
 * first of `response.function_call_arguments.done` and `response.output_item.done` (the final text
 * they carry wins over the concatenated deltas). The pipeline's intake parses `args`. A later response
 * is read by an Observable of its own: a call there that reuses a `call_id` is a new call, and the
 * pipeline answers it `duplicate_id` when both reach one `run()` (every adapter does the same).
 *
 * The Observable completes at `response.completed` or `response.incomplete` (one Observable per
 * response, also over a connection that stays open) or when the source ends. Calls whose arguments
 * never arrived whole are still emitted, with `args` an {@link toolstream!IncompleteArguments} (the pipeline
 * answers `incomplete_args` and never runs them):
 * - `response.incomplete` with a call open → reason `'max_tokens'` for `max_output_tokens`, else the
 *   reason the response gives; a `function_call` item done with `status: 'incomplete'` → `'incomplete'`;
 * - the source ends with a call open, or `response.completed` arrives while one is open and the
 *   response's final output does not hold it whole → `'stream_ended'`;
 * - an `error` or `response.failed` event → open calls get `'stream_error'`, then the Observable errors
 *   with an {@link OpenAIResponsesStreamError}; a source that errors → the same, with the source's error
 *   as thrown (`pipeline.run` then rejects with a `SourceError` holding every result).
 *
 * **Free-form tools** (opt-in). With `options.custom` from {@link openAICustomTools}, a
 * `custom_tool_call` item of a declared tool is read the same way — `response.custom_tool_call_input.delta`
 * events, emitted at `response.custom_tool_call_input.done` or `response.output_item.done` — and
 * emitted as `{ id: call_id, name, args: JSON.stringify(input) }`: the JSON encoding of the text, so the
 * pipeline's intake (which parses string arguments as JSON) hands the tool's `z.string()` input the
 * text exactly as the model wrote it. A `custom_tool_call` of any other name is ignored, as a server's
 * own call: xAI reports its server-side searches (`x_keyword_search`, …) as `custom_tool_call` items.
 *
 * Other output items (messages, reasoning, web search and other built-in tool calls) and unknown
 * events are ignored. A function call's `namespace` is not used: the name is taken as given.
 *
 * Each event costs constant time however many calls are open at once (they are indexed by call id,
 * item id and output index), so a response with N calls costs time linear in N.
 *
 * Unsubscribing stops reading the source (an async iterable's `return()` is called, which makes the
 * SDK's stream close the request). At a terminal event (`response.completed`, `response.incomplete`,
 * `response.failed`, `error`) the adapter lets go of the source instead: an Observable is unsubscribed
 * (e.g. `fromEvent` over a Responses WebSocket, which stays open for the next response), while an async
 * iterable is read on to its end, which follows at once, with nothing more taken from it. Its
 * `return()` is not called there because on the SDK's `client.responses.stream()` helper it aborts the
 * request, and `await stream.finalResponse()` would then reject.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * import { createPipeline } from 'toolstream';
 * import { fromOpenAIResponsesStream, toOpenAIResponsesInput, toOpenAIResponsesTools } from 'toolstream/openai';
 *
 * const client = new OpenAI();
 * const pipeline = createPipeline({ tools: [readFile, search] });
 * const tools = toOpenAIResponsesTools(pipeline);
 * const stream = client.responses.stream({ model: 'gpt-4.1', input: 'Summarize README.md', tools });
 * const results = await pipeline.run(fromOpenAIResponsesStream(stream));
 * const { id } = await stream.finalResponse();
 * // The next turn answers every call:
 * const next = client.responses.stream({ model: 'gpt-4.1', previous_response_id: id, input: toOpenAIResponsesInput(results), tools });
 * ```
 *
 * @param events The stream: what `client.responses.stream(…)` or `client.responses.create({ …, stream:
 *   true })` returns, or any async iterable or Observable of its events.
 * @param options `{ custom }` from {@link openAICustomTools}: the tools the model calls with free-form
 *   text (the same declaration as for `toOpenAIResponsesTools` and `toOpenAIResponsesInput`).
 * @throws {ConfigError} when `options.custom` is not from `openAICustomTools`.
 *
 * @example
 * ```ts
 * const custom = openAICustomTools([applyPatch]); // applyPatch's input is z.string()
 * const stream = client.responses.stream({ model: 'gpt-5', input, tools: toOpenAIResponsesTools(pipeline, { custom }) });
 * const results = await pipeline.run(fromOpenAIResponsesStream(stream, { custom }));
 * // applyPatch's body got the patch text as the model wrote it; answer with custom_tool_call_output:
 * input.push(...(await stream.finalResponse()).output, ...toOpenAIResponsesInput(results, { custom }));
 * ```
 */
export function fromOpenAIResponsesStream(
  events: AsyncIterable<ResponseStreamEvent> | Observable<ResponseStreamEvent>,
  options?: OpenAIResponsesOptions,
): Observable<ToolCall> {
  return readOpenAIResponsesCalls(events, customOption('fromOpenAIResponsesStream', options));
}

/**
 * `fromOpenAIResponsesStream` with the free-form tools already checked, and `onEvent` shown every event
 * as it is read, before the calls it completes are emitted (`runOpenAIResponsesTurn` collects the
 * output items from the same events). Internal.
 */
export function readOpenAIResponsesCalls(
  events: AsyncIterable<ResponseStreamEvent> | Observable<ResponseStreamEvent>,
  custom: OpenAICustomTools | undefined,
  onEvent?: (event: ResponseStreamEvent) => void,
): Observable<ToolCall> {
  return new Observable<ToolCall>((subscriber) => {
    const assembler = new ResponsesCallAssembler(custom, (call) => {
      if (!subscriber.closed) subscriber.next(call);
    });
    const reader = new SourceReader(events, {
      next: (event) => {
        if (subscriber.closed) return;
        onEvent?.(event);
        const end = assembler.push(event);
        if (end === undefined) return;
        // The response is over: let go of the source without aborting it (see the TSDoc above).
        reader.detach();
        if (end === 'complete') subscriber.complete();
        else subscriber.error(end.error);
      },
      complete: () => {
        assembler.closeAll('stream_ended');
        subscriber.complete();
      },
      error: (error) => {
        assembler.closeAll('stream_error');
        subscriber.error(error);
      },
    });
    reader.start();
    return () => reader.stop();
  });
}
