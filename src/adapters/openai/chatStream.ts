import { Observable } from 'rxjs';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { IncompleteArguments } from '../../util/incompleteArguments.js';
import { SourceReader } from '../../stream/sourceReader.js';
import { isObject, isRecord } from '../../util/validate.js';
import { inTurn, turnId } from '../../util/inTurn.js';
import type { ToolCall } from '../../types/toolCall.js';

/** One fragment of `choices[0].delta.tool_calls`, as the SDK types it (read defensively all the same). */
type ToolCallFragment = ChatCompletionChunk.Choice.Delta.ToolCall;

/**
 * Turns an OpenAI Chat Completions stream into tool calls, each emitted as soon as its arguments are
 * complete, so the pipeline starts running it while the model is still streaming the next one.
 *
 * Pass the SDK's stream — `client.chat.completions.stream(...)` or `await
 * client.chat.completions.create({ ..., stream: true })` — or any async iterable or Observable of
 * `ChatCompletionChunk`s. The fragments of `choices[0].delta.tool_calls` are
 * merged into calls, one call streamed at a time: a fragment continues the open call when it has the
 * same `index` (or none) and brings no other non-empty `id`; otherwise it starts the next call. So a
 * new index starts a call, and so does a new id on the same index (Ollama sends every call as `index:
 * 0`, each with its own id), while a fragment that repeats the call's id, or sends `id: ""`, continues
 * it — unless it sends the call again whole (a name, and arguments that open an object, once the
 * call's arguments are a complete JSON object, which nothing can continue): that is the same call, and
 * the fragment is dropped. `id` and `function.name` come with the call's first fragment (a later non-empty name replaces
 * it, as the SDK's own accumulator does; a later id only fills in a missing one), and the
 * `function.arguments` fragments are concatenated. A call is complete when the next call starts or
 * when `finish_reason` arrives — also when several calls and the finish come in one chunk.
 *
 * Each call is emitted as `{ id, name, args }` with `args` the arguments text, unparsed: the pipeline's
 * intake parses it (`''` means `{}`; text that is not JSON gives that call an `invalid_json` result).
 *
 * Calls whose arguments never arrived whole are still emitted, with `args` an
 * {@link IncompleteArguments} (the pipeline answers `incomplete_args` and never runs them):
 * - `finish_reason: 'length'` (max tokens) with a call open → reason `'max_tokens'`;
 *   `'content_filter'` → reason `'content_filter'` (the output was cut there too);
 * - the source ends with a call open and no `finish_reason` → `'stream_ended'`, unless its arguments
 *   parse as a JSON object: some servers never send a `finish_reason` (OpenRouter in front of
 *   Novita), so a call whose arguments are a whole object when the stream ends cleanly is complete;
 * - the source errors → the open call gets `'stream_error'`, then the returned Observable errors with
 *   the source's error (`pipeline.run` then rejects with a `SourceError` holding every result).
 *
 * Calls completed earlier in a stream that is later cut off have already been emitted (and may be
 * running): that is the price of starting early.
 *
 * Only choice `0` is read: tool calling uses `n: 1`. Chunks without it (the `choices: []` usage
 * chunk), text and refusal deltas, the legacy `function_call` delta and unknown fields are ignored, as
 * is a late fragment of a call already emitted in the same completion (an index or id seen before,
 * and no new id). A later completion of the source (another chunk `id`) starts afresh: a call there that
 * reuses an earlier completion's id (Kimi numbers its calls per response: `functions.add:0`) is a new
 * call, emitted, and the pipeline answers it `duplicate_id` in the same run (every adapter does the
 * same across responses).
 *
 * Unsubscribing stops reading the source (an async iterable's `return()` is called, which makes the
 * SDK's stream close the request).
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * import { createPipeline } from 'toolstream';
 * import { fromOpenAIChatStream, toOpenAIChatTools, toOpenAIChatToolMessages } from 'toolstream/openai';
 *
 * const client = new OpenAI();
 * const pipeline = createPipeline({ tools: [readFile, search] });
 * const stream = client.chat.completions.stream({ model: 'gpt-4o', messages, tools: toOpenAIChatTools(pipeline) });
 * const results = await pipeline.run(fromOpenAIChatStream(stream));
 * // The assistant message that holds the calls, then a tool message per call:
 * messages.push(await stream.finalMessage(), ...toOpenAIChatToolMessages(results));
 * ```
 */
export function fromOpenAIChatStream(
  chunks: AsyncIterable<ChatCompletionChunk> | Observable<ChatCompletionChunk>,
): Observable<ToolCall> {
  return readOpenAIChatCalls(chunks);
}

/**
 * `fromOpenAIChatStream`, with `onChunk` shown every chunk as it is read, before the calls it completes
 * are emitted (`runOpenAIChatTurn` assembles the assistant message's text from the same chunks). Internal.
 */
export function readOpenAIChatCalls(
  chunks: AsyncIterable<ChatCompletionChunk> | Observable<ChatCompletionChunk>,
  onChunk?: (chunk: ChatCompletionChunk) => void,
): Observable<ToolCall> {
  return new Observable<ToolCall>((subscriber) => {
    const assembler = new ChatToolCallAssembler((call) => {
      if (!subscriber.closed) subscriber.next(call);
    });
    const reader = new SourceReader(chunks, {
      next: (chunk) => {
        if (subscriber.closed) return;
        onChunk?.(chunk);
        assembler.push(chunk);
      },
      complete: () => {
        assembler.end();
        subscriber.complete();
      },
      error: (error) => {
        assembler.close('stream_error');
        subscriber.error(error);
      },
    });
    reader.start();
    return () => reader.stop();
  });
}

interface OpenCall {
  /** The fragments' `index`; `undefined` when the server sends none. */
  readonly index: number | undefined;
  /** The completion it came in (the chunk's `id`): its turn. */
  readonly turn: string | undefined;
  id: string;
  name: string;
  args: string;
}

/** Merges tool-call fragments into calls; one per subscription. */
class ChatToolCallAssembler {
  /** The call being streamed: servers stream one call at a time. */
  #open: OpenCall | undefined;
  /**
   * Indexes and ids of the calls of this completion emitted so far: a late fragment of one of them is
   * dropped. A later completion starts afresh: a call there that reuses an id is a new call.
   */
  #doneIndexes = new Set<number>();
  #doneIds = new Set<string>();

  /** The completion being streamed, by its id. */
  #turn: string | undefined;

  constructor(private readonly emit: (call: ToolCall) => void) {}

  push(chunk: ChatCompletionChunk): void {
    if (!isObject(chunk)) return;
    // The completion's id, on every chunk (Azure's filter-results chunk has `id: ""`).
    const turn = turnId(chunk.id);
    if (turn !== undefined && turn !== this.#turn) {
      this.#turn = turn;
      this.#doneIndexes = new Set();
      this.#doneIds = new Set();
    }
    const choice = firstChoice(chunk);
    if (choice === undefined) return;
    const delta = choice['delta'];
    const fragments = isObject(delta) ? delta['tool_calls'] : undefined;
    if (Array.isArray(fragments)) {
      for (const fragment of fragments as unknown[]) if (isObject(fragment)) this.#add(fragment as unknown as ToolCallFragment);
    }
    const finish = choice['finish_reason'];
    if (typeof finish === 'string' && finish !== '') {
      this.close(finish === 'length' ? 'max_tokens' : finish === 'content_filter' ? 'content_filter' : undefined);
    }
  }

  /** Emits the open call: complete when `incomplete` is undefined, else as incomplete for that reason. */
  close(incomplete: string | undefined): void {
    const open = this.#open;
    if (open === undefined) return;
    this.#open = undefined;
    if (open.index !== undefined) this.#doneIndexes.add(open.index);
    if (open.id !== '') this.#doneIds.add(open.id);
    const args = incomplete === undefined ? open.args : new IncompleteArguments(incomplete, open.args);
    this.emit(inTurn({ id: open.id, name: open.name, args }, open.turn));
  }

  /**
   * The source ended cleanly with a call open. Some servers never send a `finish_reason` (OpenRouter
   * in front of Novita): the call is complete when its arguments parse as a JSON object — nothing can
   * be missing from it then — and cut off (`'stream_ended'`) otherwise.
   */
  end(): void {
    const open = this.#open;
    if (open !== undefined) this.close(isJsonObject(open.args) ? undefined : 'stream_ended');
  }

  #add(fragment: ToolCallFragment): void {
    const index = typeof fragment.index === 'number' ? fragment.index : undefined;
    const id = typeof fragment.id === 'string' && fragment.id !== '' ? fragment.id : undefined;
    let open = this.#open;
    if (!continues(open, index, id)) {
      // A late fragment of a call already emitted (it brings no other id): dropped.
      if (id === undefined ? index !== undefined && this.#doneIndexes.has(index) : this.#doneIds.has(id)) return;
      this.close(undefined); // the next call starts: the previous one is complete
      open = this.#open = { index, turn: this.#turn, id: '', name: '', args: '' };
    } else if (resends(open, id, fragment)) {
      return; // the call sent again whole, as its first fragment: the same call, once
    }
    if (id !== undefined) open.id = id;
    const fn = fragment.function;
    if (isObject(fn)) {
      if (typeof fn.name === 'string' && fn.name !== '') open.name = fn.name;
      if (typeof fn.arguments === 'string') open.args += fn.arguments;
    }
  }
}

/**
 * Choice 0 of a chunk, matched by its index (with n > 1 a chunk may carry only other choices), or
 * `undefined` when the chunk has none. Read defensively: the chunk is untrusted input.
 */
export function firstChoice(chunk: unknown): Record<string, unknown> | undefined {
  const choices = isObject(chunk) ? chunk['choices'] : undefined;
  if (!Array.isArray(choices)) return undefined;
  const choice: unknown = choices.find((c: unknown) => isObject(c) && (c['index'] ?? 0) === 0);
  return isObject(choice) ? choice : undefined;
}

/**
 * Whether a fragment continues the open call: the same `index` (or none, as some servers send) and no
 * other non-empty `id`. Servers that reuse one index for every call (Ollama 0.20 sends each call as
 * `index: 0` with its own id) start a new call with a new id; those that repeat the id, or send
 * `id: ""`, on continuation fragments continue it.
 */
function continues(open: OpenCall | undefined, index: number | undefined, id: string | undefined): open is OpenCall {
  return open !== undefined && (index === undefined || index === open.index) && (id === undefined || open.id === '' || id === open.id);
}

/**
 * Whether a fragment that continues the open call sends it again whole: its id again, with a name and
 * arguments that open an object, while the call's arguments already are a complete JSON object —
 * appended, they could only make it invalid. (Novita's re-send of a call whose first arguments were
 * `""` continues it: those are no object yet.)
 */
function resends(open: OpenCall, id: string | undefined, fragment: ToolCallFragment): boolean {
  const fn: unknown = fragment.function;
  if (id === undefined || id !== open.id || !isObject(fn)) return false;
  const { name, arguments: args } = fn;
  return typeof name === 'string' && name !== '' && typeof args === 'string' && args.trimStart().startsWith('{') && isJsonObject(open.args);
}

function isJsonObject(text: string): boolean {
  try {
    return isRecord(JSON.parse(text));
  } catch {
    return false;
  }
}
