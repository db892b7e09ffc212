import { Observable } from 'rxjs';
import type { TextStreamPart, ToolSet } from 'ai';
import { IncompleteArguments } from '../../util/incompleteArguments.js';
import { SourceReader } from '../../stream/sourceReader.js';
import { inTurn } from '../../util/inTurn.js';
import { isObject } from '../../util/validate.js';
import type { ToolCall } from '../../types/toolCall.js';

/**
 * A part of an AI SDK stream, as `fromAISDKStream` accepts it: any object with a `type`. Every
 * `TextStreamPart` of `streamText(...).fullStream` is one, whatever the tool set, so the result's
 * `fullStream` can be passed as it is. Parts of types the adapter does not read are ignored.
 *
 * @example
 * ```ts
 * const parts: AsyncIterable<AISDKStreamPart> = streamText({ model, tools, prompt }).fullStream;
 * ```
 */
export interface AISDKStreamPart {
  readonly type: string;
}

/** The parts the adapter reads, as AI SDK v6 types them. */
type Part = TextStreamPart<ToolSet>;
type PartOf<T extends Part['type']> = Extract<Part, { type: T }>;

/**
 * Turns the `fullStream` of an AI SDK (v6) `streamText` call into tool calls for a toolstream
 * pipeline. Each `tool-call` part is emitted at once as `{ id: toolCallId, name: toolName, args: input }`,
 * so the pipeline starts running it while the model is still streaming the next one (the SDK itself
 * executes tools only after the step ends).
 *
 * Give `streamText` the tools **without `execute`**, so toolstream runs them and the SDK does not.
 * Build them from `toolSchemas(pipeline)` with the SDK's `jsonSchema()`: the SDK then only parses the
 * input and toolstream validates it with the tool's zod schema (defaults and transforms applied once —
 * a `tool-call` part carries the output of the SDK's schema, so a zod schema given to both would
 * transform twice).
 *
 * - `providerExecuted` calls (and their `tool-input-*` parts) are skipped: they ran at the provider.
 * - A call the SDK marks `invalid` (input that is not JSON, a tool not in its tool set, input its schema
 *   rejects) is still emitted, so the pipeline answers it and never runs it: text that is not JSON is
 *   passed as the text (`invalid_json`), anything else as the parsed input, which the pipeline's own
 *   validation rejects (`unknown_tool`, `invalid_args`, with messages the model can act on) as long as
 *   the SDK's tool set is the pipeline's. The SDK also records its own error result for such a call in
 *   `response.messages` (the `tool-error` part): send the pipeline's result instead, not both.
 * - A call whose input was started (`tool-input-start`) but never completed by a `tool-call` is emitted
 *   with `args` an {@link IncompleteArguments} (the pipeline answers `incomplete_args` and never runs
 *   it; `partialText` holds the `tool-input-delta` text received) when its step finishes
 *   (`finish-step` / `finish`): reason `'max_tokens'` for `finishReason: 'length'`, `'content_filter'`
 *   for `'content-filter'`, `'stream_error'` for `'error'`, else `'stream_ended'`; on an `abort` part
 *   with reason `'aborted'`; when the source ends with reason `'stream_ended'`.
 * - Each call id once per step: a repeated `tool-call` part is the same call, emitted once. A later
 *   step (after a `start-step`) is a turn of its own: a call there that reuses an earlier step's id
 *   (providers that number calls per response do) is emitted, never dropped; in the same `run()` the
 *   pipeline answers it `duplicate_id` (every adapter does the same across responses).
 * - An `error` part, or the source failing: the open calls are emitted as incomplete
 *   (`'stream_error'`), then the Observable errors with that error and stops reading (so
 *   `pipeline.run` rejects with a `SourceError` holding every result). Note that `streamText` reports a
 *   model error as an `error` part and may go on streaming: nothing after it is read.
 *
 * Calls completed before a stream is cut off have already been emitted (and may be running): that is
 * the price of starting early. Unsubscribing stops reading at once (a `ReadableStream` such as
 * `fullStream` is cancelled through its reader, an async iterator is `return()`ed). That does not stop
 * the model: `fullStream` is one branch of what `streamText` reads, and it goes on reading the model to
 * the end; to stop the request, abort the `abortSignal` given to `streamText` (e.g. in `finalize`).
 * Subscribe once: a stream can be read only once (read `result.fullStream` again for another branch).
 *
 * @param parts - `streamText(...).fullStream`, or any async iterable, `ReadableStream` or Observable of
 *   its parts.
 * @returns The tool calls, in the order the model completed them.
 *
 * @example
 * ```ts
 * import { jsonSchema, streamText, tool, type ToolSet } from 'ai';
 * import { createPipeline, toolSchemas } from 'toolstream';
 * import { fromAISDKStream, toAISDKToolMessage } from 'toolstream/ai-sdk';
 *
 * const pipeline = createPipeline({ tools: [readFile, search] });
 * const tools: ToolSet = Object.fromEntries(
 *   toolSchemas(pipeline).map((t) => [t.name, tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema) })]),
 * ); // no `execute`: toolstream runs them
 *
 * const result = streamText({ model, tools, messages });
 * const results = await pipeline.run(fromAISDKStream(result.fullStream));
 * const { messages: response } = await result.response;
 * messages.push(...response.filter((m) => m.role === 'assistant'), toAISDKToolMessage(results));
 * ```
 */
export function fromAISDKStream(
  parts: AsyncIterable<AISDKStreamPart> | ReadableStream<AISDKStreamPart> | Observable<AISDKStreamPart>,
): Observable<ToolCall> {
  return new Observable<ToolCall>((subscriber) => {
    const reader = new ToolCallReader((call) => {
      if (!subscriber.closed) subscriber.next(call);
    });
    const source = new SourceReader(parts, {
      // A part that cannot be read (a throwing getter) fails the source: SourceReader calls `error`.
      next: (part) => {
        const failure = reader.push(part);
        if (failure !== undefined) {
          reader.close('stream_error');
          subscriber.error(failure.error);
        }
      },
      complete: () => {
        reader.close('stream_ended');
        subscriber.complete();
      },
      error: (error) => {
        reader.close('stream_error');
        subscriber.error(error);
      },
    });
    source.start();
    return () => source.stop();
  });
}

interface OpenInput {
  readonly name: string;
  text: string;
}

/** Follows the parts of one stream; one per subscription. */
class ToolCallReader {
  /** Calls whose input has started and not yet completed, in the order they started. */
  readonly #open = new Map<string, OpenInput>();
  /**
   * Ids of this step completed, emitted or skipped: a late `tool-input-*` part, or a repeated
   * `tool-call`, for one of them is ignored. A step is a turn of its own: a later step that reuses an
   * id holds a new call, emitted (the pipeline answers it `duplicate_id` in the same run).
   */
  #settled = new Set<string>();

  /**
   * The step being streamed: each step is one model response, its turn. The SDK names the response
   * only when the step finishes, after its calls, so a step's turn is an id of our own.
   */
  #turn: string = newTurn();

  constructor(private readonly sink: (call: ToolCall) => void) {}

  /** Hands a call on, as part of the step it came in. */
  private emit(call: ToolCall): void {
    this.sink(inTurn(call, this.#turn));
  }

  /** Reads one part; returns the error when it is an `error` part. */
  push(raw: AISDKStreamPart): { readonly error: unknown } | undefined {
    if (!isObject(raw)) return undefined;
    const part = raw as Part;
    switch (part.type) {
      case 'start-step':
        this.#turn = newTurn();
        this.#settled = new Set();
        return undefined;
      case 'tool-input-start':
        this.#start(part);
        return undefined;
      case 'tool-input-delta': {
        const open = this.#open.get(part.id);
        if (open !== undefined && typeof part.delta === 'string') open.text += part.delta;
        return undefined;
      }
      case 'tool-call':
        this.#call(part);
        return undefined;
      case 'finish-step':
      case 'finish':
        this.close(incompleteReason(part.finishReason));
        return undefined;
      case 'abort':
        this.close('aborted');
        return undefined;
      case 'error':
        return { error: part.error };
      default:
        return undefined;
    }
  }

  /** Emits every open call as incomplete, for `reason`. */
  close(reason: string): void {
    const open = [...this.#open];
    this.#open.clear();
    for (const [id, input] of open) {
      this.#settled.add(id);
      this.emit({ id, name: input.name, args: new IncompleteArguments(reason, input.text) });
    }
  }

  #start(part: PartOf<'tool-input-start'>): void {
    const { id } = part;
    if (typeof id !== 'string' || this.#settled.has(id) || this.#open.has(id)) return;
    if (part.providerExecuted === true) {
      this.#settled.add(id);
      return;
    }
    this.#open.set(id, { name: typeof part.toolName === 'string' ? part.toolName : '', text: '' });
  }

  #call(part: PartOf<'tool-call'>): void {
    const { toolCallId: id, toolName: name } = part;
    if (this.#settled.has(id)) return; // a repeated part of this step, or one after its call was cut off: once only
    this.#open.delete(id);
    this.#settled.add(id);
    if (part.providerExecuted === true) return;
    this.emit({ id, name, args: argsOf(part) });
  }
}

/** A fresh turn id for one step: unique across streams, since several may feed one subscription. */
function newTurn(): string {
  return `step_${globalThis.crypto.randomUUID()}`;
}

/**
 * The arguments to hand the pipeline. The SDK gives `input` parsed, except for a call it marked
 * `invalid` because the text is not JSON: then `input` is that text, and passing it on gives the call
 * an `invalid_json` result. A parsed input that is a string is passed as JSON text, so the pipeline's
 * intake (which parses string arguments) sees the same string value.
 */
function argsOf(part: PartOf<'tool-call'>): unknown {
  const { input } = part;
  if (typeof input !== 'string') return input;
  if (part.invalid === true && !isJson(input)) return input;
  return JSON.stringify(input);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Why a call still open when its step finished is incomplete. */
function incompleteReason(finishReason: unknown): string {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'content-filter':
      return 'content_filter';
    case 'error':
      return 'stream_error';
    default:
      return 'stream_ended';
  }
}
