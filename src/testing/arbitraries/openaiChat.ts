import fc from 'fast-check';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { chatCutting, chatFragments } from './chatFragments.js';
import { CHAT_BREAKAGE, chunkExtras, OPENAI_EXTRAS, preambleDelta, type Chunk } from './chatQuirks.js';
import { inMode } from './hostileStream.js';
import { emitted, isJsonObject, streamOptions, token, type ModelStream, type ModelStreamOptions, type StreamedCall } from './modelStream.js';

/**
 * How a response ends: a chunk of its own with `finish_reason` (an empty delta, as OpenAI; `content:
 * ""`, as DeepSeek), the finish on the last call's chunk (Copilot, Mistral), sent twice (OpenRouter),
 * `'stop'` instead of `'tool_calls'`, or no finish at all before `[DONE]` (Novita).
 */
type Finish = 'separate' | 'separate-content' | 'with-last' | 'twice' | 'stop' | 'none';

/**
 * Whole OpenAI Chat Completions streams (the chunks of `client.chat.completions.create({ stream: true
 * })`) that carry the given calls, written to the shapes of the recorded streams: a role chunk, the
 * calls' fragments in `choices[0].delta.tool_calls` (the first with id, type and name and `arguments:
 * ""`, then the arguments cut as {@link jsonFragments} cuts them), a chunk with `finish_reason:
 * 'tool_calls'`, and at times the usage chunk (`choices: []`) that `stream_options: { include_usage:
 * true }` adds; `toSSE('chat', …)` ends them with `data: [DONE]`.
 *
 * `'fragmented'` adds what the recorded servers do (see {@link StreamMode}): no `index` (Mistral,
 * Gemini), every call at index 0 (Ollama), indexes from 1, whole calls in one fragment, several calls
 * and the finish in one chunk, name-only first fragments (vLLM), `id: ""` continuations and a trailing
 * empty fragment (DashScope), `name: ""` continuations, `arguments: null`, a call re-sent under its id
 * and no finish at all (Novita), the finish sent twice, reasoning and text before the calls, Azure's
 * `prompt_filter_results` chunk with `id: ""`, chunks without an id, and the fields gateways add
 * (`provider`, `x_groq`, `timings`, `obfuscation`, `native_finish_reason`, `content_filter_results`…).
 * A hostile stream is cut off, ends with an error chunk (the SDK throws it) or a `length` /
 * `content_filter` finish with a call open, replays fragments, or holds junk chunks.
 *
 * @param options The calls (an arbitrary, e.g. `toolCalls({ tools })`) and the `mode`.
 * @throws {TestingOptionError} for a bad `mode` or `calls`.
 *
 * @example
 * ```ts
 * import { fromOpenAIChatStream } from 'toolstream/openai';
 * import { chatStreams, scriptedStream, toolCalls } from 'toolstream/testing';
 *
 * await fc.assert(
 *   fc.asyncProperty(chatStreams({ calls: toolCalls({ tools }), mode: 'fragmented' }), async (stream) => {
 *     const results = await pipeline.run(fromOpenAIChatStream(scriptedStream('chat', stream.events)));
 *     expect(results.map((r) => r.id)).toEqual(stream.calls.map((c) => c.id));
 *   }),
 * );
 * ```
 */
export function chatStreams(options: ModelStreamOptions): fc.Arbitrary<ModelStream<ChatCompletionChunk>> {
  const { mode, calls } = streamOptions('chatStreams', options);
  return calls.chain((list) => inMode(mode, response(list, mode !== 'valid'), CHAT_BREAKAGE)) as unknown as fc.Arbitrary<ModelStream<ChatCompletionChunk>>;
}

function response(calls: readonly StreamedCall[], quirks: boolean): fc.Arbitrary<ModelStream<Chunk>> {
  return fc
    .record({
      id: token(29),
      identified: quirks ? fc.constantFrom(true, true, true, false) : fc.constant(true),
      extras: quirks ? chunkExtras : fc.constant(OPENAI_EXTRAS),
      cutting: chatCutting(calls, quirks),
      breaks: quirks ? fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }) : fc.constant([]),
      preamble: quirks ? fc.array(preambleDelta, { maxLength: 4 }) : fc.constant<Chunk[]>([{ role: 'assistant', content: null, refusal: null }]),
      finish: quirks ? fc.constantFrom<Finish>('separate', 'separate', 'separate-content', 'with-last', 'twice', 'stop', 'none') : fc.constant<Finish>('separate'),
      usage: fc.boolean(),
      omitNullFinish: quirks ? fc.boolean() : fc.constant(false),
    })
    .map(({ id, identified, extras, cutting, breaks, preamble, finish: wanted, usage, omitNullFinish }) => {
      const turn = identified ? `chatcmpl-${id}` : undefined;
      const { fragments, args } = chatFragments(calls, cutting);
      const lastArgs = args.at(-1);
      // With no finish at all the reader takes a call as complete only when its arguments are a JSON object.
      const finish = calls.length === 0 ? (wanted === 'none' ? 'none' : 'stop') : wanted === 'none' && !(lastArgs !== undefined && isJsonObject(lastArgs)) ? 'separate' : wanted;
      const reason = finish === 'stop' || calls.length === 0 ? 'stop' : 'tool_calls';
      const base = (): Chunk => ({
        ...(turn === undefined ? {} : { id: turn, object: 'chat.completion.chunk', created: 1_727_346_178 }),
        model: 'gpt-4o-2024-08-06',
        ...extras.chunk,
      });
      const chunk = (delta: Chunk, finishReason: string | null): Chunk => ({
        ...base(),
        choices: [
          {
            index: 0,
            delta,
            ...(omitNullFinish && finishReason === null ? {} : { finish_reason: finishReason }),
            ...(extras.nativeFinish ? { native_finish_reason: finishReason } : {}),
            ...extras.choice,
          },
        ],
      });

      const groups: Chunk[][] = [];
      fragments.forEach((fragment, i) => {
        if (i === 0 || breaks.length === 0 || breaks[i % breaks.length] === true) groups.push([]);
        groups.at(-1)!.push(fragment);
      });
      const events: Chunk[] = [...extras.first.map((first) => first as Chunk), ...preamble.map((delta) => chunk(delta, null))];
      groups.forEach((group, i) => {
        const last = i === groups.length - 1 && finish === 'with-last';
        events.push(chunk({ ...extras.delta, tool_calls: group }, last ? reason : null));
      });
      const finishing = chunk(finish === 'separate-content' ? { content: '' } : {}, reason);
      if (finish === 'separate' || finish === 'separate-content' || finish === 'stop' || (finish === 'with-last' && groups.length === 0)) events.push(finishing);
      if (finish === 'twice') events.push(finishing, finishing);
      if (usage) events.push({ ...base(), ...extras.last, choices: [], usage: { prompt_tokens: 57, completion_tokens: 17, total_tokens: 74 } });
      return { mode: 'valid', turn, events, calls: calls.map((call, i) => emitted(call.id, call.name, args[i]!, turn)) };
    });
}
