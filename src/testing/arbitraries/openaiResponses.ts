import fc from 'fast-check';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { jsonFragments } from './fragments.js';
import { inMode, type Breakage } from './hostileStream.js';
import { emitted, insertAt, streamOptions, token, type ModelStream, type ModelStreamOptions, type StreamedCall } from './modelStream.js';
import { callStyle, functionCallItem, noiseItem, OPENAI_STYLE, type ItemEvents, type Json } from './responsesItems.js';

/**
 * Whole OpenAI Responses streams (the events of `client.responses.create({ stream: true })`) that carry
 * the given calls, written to the shapes of the recorded streams: `response.created`,
 * `response.in_progress`, per call a `function_call` item (`output_item.added`, its
 * `function_call_arguments.delta`s cut as {@link jsonFragments} cuts them, `function_call_arguments.done`,
 * `output_item.done`), then `response.completed` with the whole output; `sequence_number` in order.
 *
 * `'fragmented'` adds what the recorded servers do (see {@link StreamMode}): reasoning (with summary
 * parts, or as `reasoning_text`), messages with citations and a `phase`, web searches, hosted tool search,
 * programs and xAI's own `custom_tool_call`s between the calls (none a client call); no argument deltas
 * at all (LM Studio); UUID item ids (DeepSeek, Bedrock Mantle); `obfuscation`; a program's sub-calls
 * (`caller: { type: 'program' }`, still `in_progress` when done); `namespace`. A hostile stream is cut
 * off, ends in an `error`, `response.failed` or `response.incomplete` event with calls open, replays
 * items under their call id, or holds junk (deltas of unknown items, calls with a `call_id` that is no
 * string, a call done without being added).
 *
 * @param options The calls (an arbitrary, e.g. `toolCalls({ tools })`) and the `mode`.
 * @throws {TestingOptionError} for a bad `mode` or `calls`.
 *
 * @example
 * ```ts
 * import { fromOpenAIResponsesStream } from 'toolstream/openai';
 * import { responsesStreams, scriptedStream, toolCalls } from 'toolstream/testing';
 *
 * await fc.assert(
 *   fc.asyncProperty(responsesStreams({ calls: toolCalls({ tools }), mode: 'fragmented' }), async (stream) => {
 *     const results = await pipeline.run(fromOpenAIResponsesStream(scriptedStream('responses', stream.events)));
 *     expect(results.map((r) => r.id)).toEqual(stream.calls.map((c) => c.id));
 *   }),
 * );
 * ```
 */
export function responsesStreams(options: ModelStreamOptions): fc.Arbitrary<ModelStream<ResponseStreamEvent>> {
  const { mode, calls } = streamOptions('responsesStreams', options);
  return calls.chain((list) => inMode(mode, response(list, mode !== 'valid'), BREAKAGE, numbered)) as unknown as fc.Arbitrary<ModelStream<ResponseStreamEvent>>;
}

function response(calls: readonly StreamedCall[], quirks: boolean): fc.Arbitrary<ModelStream<Json>> {
  const maxPieces = quirks ? 48 : 8;
  return fc
    .record({
      id: token(48),
      suffix: token(40),
      pieces: fc.tuple(...calls.map((call) => jsonFragments(call.text, { maxPieces }))),
      styles: fc.tuple(...calls.map(() => (quirks ? callStyle : fc.constant(OPENAI_STYLE)))),
      noise: fc.array(fc.record({ at: fc.nat(), item: noiseItem }), { maxLength: quirks ? 3 : 0 }),
    })
    .map(({ id, suffix, pieces, styles, noise }) => {
      const turn = `resp_${id}`;
      const items: ItemEvents[] = insertAt(
        calls.map((call, i) => functionCallItem(call.id, call.name, call.text, pieces[i]!, styles[i]!, suffix, i)),
        noise,
      );
      const events: Json[] = [
        { type: 'response.created', response: responseObject(turn, 'in_progress', []) },
        { type: 'response.in_progress', response: responseObject(turn, 'in_progress', []) },
        ...items.flatMap((item, outputIndex) => item.events(outputIndex)),
        { type: 'response.completed', response: responseObject(turn, 'completed', items.map((item) => item.item)) },
      ];
      return { mode: 'valid', turn, events: numbered(events), calls: calls.map((call) => emitted(call.id, call.name, call.text, turn)) };
    });
}

/** Events numbered in order (`sequence_number`), as the API sends them. */
function numbered(events: readonly Json[]): Json[] {
  return events.map((event, sequence_number) => (typeof event === 'object' && event !== null && !Array.isArray(event) ? { ...event, sequence_number } : event));
}

function responseObject(id: string, status: string, output: readonly Json[], more: Json = {}): Json {
  return {
    id,
    object: 'response',
    created_at: 1_755_000_000,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: 'gpt-4.1-2025-04-14',
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: null,
    metadata: {},
    ...more,
  };
}

/** How Responses streams break (see `responsesStreams`). */
const BREAKAGE: Breakage<Json> = {
  junk: fc.oneof(
    fc.constantFrom<Json>(
      { type: 'response.function_call_arguments.delta', item_id: 'fc_unknown', output_index: 99, delta: '{"x":' },
      { type: 'response.output_item.added', item: { type: 'function_call', call_id: 42, name: 'x' }, output_index: 98 },
      { type: 'response.output_item.added', item: { id: 'fc_junk', type: 'function_call', call_id: 'call_junk', name: 'unknown_tool', arguments: '' }, output_index: 97 },
      { type: 'response.output_item.done', item: { type: 'function_call', call_id: 'call_whole', name: 'read_file', arguments: '{"path":"x"}', status: 'completed' }, output_index: 96 },
      { type: 'response.function_call_arguments.done', output_index: 0, arguments: 5 },
      { type: 'response.function_call_arguments.delta', output_index: 0, delta: '}}' },
      { type: 'response.mystery', payload: [1, 2] },
    ),
    fc.jsonValue().map((value) => value as Json),
  ),
  endings: fc.constantFrom<readonly Json[]>(
    [{ type: 'error', code: 'server_error', message: 'The server had an error while processing your request.', param: null }],
    [{ type: 'response.failed', response: responseObject('resp_failed', 'failed', [], { error: { code: 'server_error', message: 'The model failed.' } }) }],
    [{ type: 'response.incomplete', response: responseObject('resp_incomplete', 'incomplete', [], { incomplete_details: { reason: 'max_output_tokens' } }) }],
    [{ type: 'response.incomplete', response: responseObject('resp_incomplete', 'incomplete', [], { incomplete_details: { reason: 'content_filter' } }) }],
    [],
  ),
};
