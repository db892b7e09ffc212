import { Observable } from 'rxjs';
import type { ResponseFunctionToolCall, ResponseOutputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { IncompleteArguments } from '../../incompleteArguments.js';
import type { ToolCall } from '../../toolCall.js';
import { SourceReader } from '../../internal/sourceReader.js';
import { OpenAIResponsesStreamError } from './errors.js';
import { OpenCalls, type CallKeys } from './openCalls.js';
import { isObject } from '../../internal/validate.js';

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
 * they carry wins over the concatenated deltas). The pipeline's intake parses `args`.
 *
 * The Observable completes at `response.completed` or `response.incomplete` (one Observable per
 * response, also over a connection that stays open) or when the source ends. Calls whose arguments
 * never arrived whole are still emitted, with `args` an {@link IncompleteArguments} (the pipeline
 * answers `incomplete_args` and never runs them):
 * - `response.incomplete` with a call open → reason `'max_tokens'` for `max_output_tokens`, else the
 *   reason the response gives; a `function_call` item done with `status: 'incomplete'` → `'incomplete'`;
 * - the source ends with a call open, or `response.completed` arrives while one is open and the
 *   response's final output does not hold it whole → `'stream_ended'`;
 * - an `error` or `response.failed` event → open calls get `'stream_error'`, then the Observable errors
 *   with an {@link OpenAIResponsesStreamError}; a source that errors → the same, with the source's error
 *   as thrown (`pipeline.run` then rejects with a `SourceError` holding every result).
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
 */
export function fromOpenAIResponsesStream(
  events: AsyncIterable<ResponseStreamEvent> | Observable<ResponseStreamEvent>,
): Observable<ToolCall> {
  return new Observable<ToolCall>((subscriber) => {
    const assembler = new ResponsesCallAssembler((call) => {
      if (!subscriber.closed) subscriber.next(call);
    });
    const reader = new SourceReader(events, {
      next: (event) => {
        if (subscriber.closed) return;
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

interface OpenCall extends CallKeys {
  name: string;
  args: string;
}

/** How an event ended the stream, if it did. */
type End = 'complete' | { readonly error: OpenAIResponsesStreamError } | undefined;

/** Tracks the open function calls of one response; one per subscription. */
class ResponsesCallAssembler {
  /** Open calls, in the order they were added. */
  readonly #open = new OpenCalls<OpenCall>();
  /** The `call_id`s emitted: each call is emitted once. */
  readonly #emitted = new Set<string>();

  constructor(private readonly emit: (call: ToolCall) => void) {}

  push(event: ResponseStreamEvent): End {
    if (!isObject(event)) return undefined;
    switch (event.type) {
      case 'response.output_item.added': {
        const item = functionCall(event.item);
        if (item === undefined || this.#emitted.has(item.call_id) || this.#open.has(item.call_id)) return undefined;
        this.#open.add({
          callId: item.call_id,
          name: item.name,
          itemId: nonEmpty(item.id),
          outputIndex: typeof event.output_index === 'number' ? event.output_index : undefined,
          args: typeof item.arguments === 'string' ? item.arguments : '',
        });
        return undefined;
      }
      case 'response.function_call_arguments.delta': {
        const open = this.#open.find(nonEmpty(event.item_id), event.output_index);
        if (open !== undefined && typeof event.delta === 'string') open.args += event.delta;
        return undefined;
      }
      case 'response.function_call_arguments.done': {
        const open = this.#open.find(nonEmpty(event.item_id), event.output_index);
        if (open === undefined) return undefined;
        if (open.name === '' && typeof event.name === 'string') open.name = event.name;
        this.#close(open, typeof event.arguments === 'string' ? event.arguments : open.args, undefined);
        return undefined;
      }
      case 'response.output_item.done': {
        const item = functionCall(event.item);
        if (item === undefined || this.#emitted.has(item.call_id)) return undefined;
        const open =
          this.#open.get(item.call_id) ??
          this.#open.find(nonEmpty(item.id), event.output_index) ??
          // Done without ever being added: the item is whole, so it can be emitted all the same.
          { callId: item.call_id, name: item.name, itemId: nonEmpty(item.id), outputIndex: event.output_index, args: '' };
        if (open.name === '') open.name = item.name;
        const args = typeof item.arguments === 'string' ? item.arguments : open.args;
        this.#close(open, args, item.status === 'incomplete' ? 'incomplete' : undefined);
        return undefined;
      }
      case 'response.completed': {
        // Calls still open (no done event reached us): use the final output when it holds them whole.
        const output: unknown = isObject(event.response) ? event.response.output : undefined;
        const final = new Map<string, ResponseFunctionToolCall>();
        if (this.#open.size > 0 && Array.isArray(output)) {
          for (const entry of output as unknown[]) {
            const item = functionCall(entry);
            if (item !== undefined && !final.has(item.call_id)) final.set(item.call_id, item);
          }
        }
        for (const open of this.#open.list()) {
          const item = final.get(open.callId);
          if (item !== undefined && typeof item.arguments === 'string' && item.status !== 'incomplete' && item.status !== 'in_progress') {
            this.#close(open, item.arguments, undefined);
          } else {
            this.#close(open, open.args, 'stream_ended');
          }
        }
        return 'complete';
      }
      case 'response.incomplete': {
        const details: unknown = isObject(event.response) ? event.response.incomplete_details : undefined;
        const reason = isObject(details) && typeof details['reason'] === 'string' ? details['reason'] : undefined;
        this.closeAll(reason === 'max_output_tokens' ? 'max_tokens' : (reason ?? 'incomplete'));
        return 'complete';
      }
      case 'response.failed':
      case 'error': {
        this.closeAll('stream_error');
        return { error: new OpenAIResponsesStreamError(event) };
      }
      default:
        return undefined;
    }
  }

  /** Emits every open call as incomplete, in the order they were added. */
  closeAll(reason: string): void {
    for (const open of this.#open.list()) this.#close(open, open.args, reason);
  }

  #close(open: OpenCall, args: string, incomplete: string | undefined): void {
    this.#open.delete(open);
    if (this.#emitted.has(open.callId)) return;
    this.#emitted.add(open.callId);
    this.emit({ id: open.callId, name: open.name, args: incomplete === undefined ? args : new IncompleteArguments(incomplete, args) });
  }
}

/** The item as a function call, when it is one with a `call_id`. */
function functionCall(item: ResponseOutputItem | unknown): ResponseFunctionToolCall | undefined {
  if (!isObject(item) || item['type'] !== 'function_call' || typeof item['call_id'] !== 'string') return undefined;
  const call = item as unknown as ResponseFunctionToolCall;
  return typeof call.name === 'string' ? call : { ...call, name: '' };
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
