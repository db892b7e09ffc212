import { Observable } from 'rxjs';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { IncompleteArguments } from '../../incompleteArguments.js';
import type { ToolCall } from '../../toolCall.js';
import { SourceReader } from '../../internal/sourceReader.js';
import { isObject } from '../../internal/validate.js';

/** One fragment of `choices[0].delta.tool_calls`, as the SDK types it (read defensively all the same). */
type ToolCallFragment = ChatCompletionChunk.Choice.Delta.ToolCall;

/**
 * Turns an OpenAI Chat Completions stream into tool calls, each emitted as soon as its arguments are
 * complete, so the pipeline starts running it while the model is still streaming the next one.
 *
 * Pass the SDK's stream — `client.chat.completions.stream(...)` or `await
 * client.chat.completions.create({ ..., stream: true })` — or any async iterable or Observable of
 * `ChatCompletionChunk`s. The fragments of `choices[0].delta.tool_calls` are
 * merged by their `index`: `id` and `function.name` come with the first fragment of an index (a later
 * non-empty one replaces them, as the SDK's own accumulator does), and the `function.arguments`
 * fragments are concatenated. A call is complete when a fragment with a new index arrives or when
 * `finish_reason` does — also when several calls and the finish come in one chunk.
 *
 * Each call is emitted as `{ id, name, args }` with `args` the arguments text, unparsed: the pipeline's
 * intake parses it (`''` means `{}`; text that is not JSON gives that call an `invalid_json` result).
 *
 * Calls whose arguments never arrived whole are still emitted, with `args` an
 * {@link IncompleteArguments} (the pipeline answers `incomplete_args` and never runs them):
 * - `finish_reason: 'length'` (max tokens) with a call open → reason `'max_tokens'`;
 *   `'content_filter'` → reason `'content_filter'` (the output was cut there too);
 * - the source ends with a call open and no `finish_reason` → `'stream_ended'`;
 * - the source errors → the open call gets `'stream_error'`, then the returned Observable errors with
 *   the source's error (`pipeline.run` then rejects with a `SourceError` holding every result).
 *
 * Calls completed earlier in a stream that is later cut off have already been emitted (and may be
 * running): that is the price of starting early.
 *
 * Only choice `0` is read: tool calling uses `n: 1`. Chunks without it (the `choices: []` usage
 * chunk), text and refusal deltas, the legacy `function_call` delta and unknown fields are ignored, as
 * is a late fragment of a call already emitted. A fragment without an `index` (some OpenAI-compatible
 * servers) continues the open call unless it brings a different `id`.
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
  return new Observable<ToolCall>((subscriber) => {
    const assembler = new ChatToolCallAssembler((call) => {
      if (!subscriber.closed) subscriber.next(call);
    });
    const reader = new SourceReader(chunks, {
      next: (chunk) => {
        if (!subscriber.closed) assembler.push(chunk);
      },
      complete: () => {
        assembler.close('stream_ended');
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
  readonly key: number | string;
  id: string;
  name: string;
  args: string;
}

/** Merges tool-call fragments into calls; one per subscription. */
class ChatToolCallAssembler {
  #open: OpenCall | undefined;
  /** Keys of every call opened so far: a late fragment of an emitted call is dropped. */
  readonly #seen = new Set<number | string>();
  #unindexed = 0;

  constructor(private readonly emit: (call: ToolCall) => void) {}

  push(chunk: ChatCompletionChunk): void {
    const choices: unknown = isObject(chunk) ? chunk.choices : undefined;
    if (!Array.isArray(choices)) return;
    // Choice 0: matched by its index (with n > 1 a chunk may carry only other choices).
    const choice: unknown = choices.find((c: unknown) => isObject(c) && (c['index'] ?? 0) === 0);
    if (!isObject(choice)) return;
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
    const args = incomplete === undefined ? open.args : new IncompleteArguments(incomplete, open.args);
    this.emit({ id: open.id, name: open.name, args });
  }

  #add(fragment: ToolCallFragment): void {
    const key = this.#keyOf(fragment);
    let open = this.#open;
    if (open?.key !== key) {
      if (this.#seen.has(key)) return;
      this.close(undefined); // a new index: the previous call is complete
      this.#seen.add(key);
      open = this.#open = { key, id: '', name: '', args: '' };
    }
    const { id, function: fn } = fragment;
    if (typeof id === 'string' && id !== '') open.id = id;
    if (isObject(fn)) {
      if (typeof fn.name === 'string' && fn.name !== '') open.name = fn.name;
      if (typeof fn.arguments === 'string') open.args += fn.arguments;
    }
  }

  #keyOf(fragment: ToolCallFragment): number | string {
    if (typeof fragment.index === 'number') return fragment.index;
    const open = this.#open;
    const { id } = fragment;
    if (open !== undefined && (typeof id !== 'string' || id === '' || id === open.id)) return open.key;
    return `unindexed:${this.#unindexed++}`;
  }
}
