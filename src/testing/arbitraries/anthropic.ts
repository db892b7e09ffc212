import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import fc from 'fast-check';
import { noiseBlocks, textBlock, toolUseBlock, type BlockSpec } from './anthropicBlocks.js';
import { jsonFragments } from './fragments.js';
import { inMode, type Breakage } from './hostileStream.js';
import { emitted, insertAt, isJsonObject, streamOptions, token, type ModelStream, type ModelStreamOptions, type StreamedCall } from './modelStream.js';

type Event = Readonly<Record<string, unknown>>;

const MODELS = ['claude-sonnet-4-20250514', 'claude-haiku-4-5-20251001', 'claude-opus-4-6', 'claude-3-5-sonnet-20241022'];

/**
 * Whole Anthropic Messages streams (the raw events of `client.messages.create({ stream: true })`) that
 * carry the given calls, written to the shapes of the recorded streams: `message_start`, a
 * `content_block_start` / `input_json_delta`s / `content_block_stop` per `tool_use` block (the
 * arguments cut as {@link jsonFragments} cuts them), `message_delta` with `stop_reason: 'tool_use'`,
 * `message_stop`. See {@link StreamMode} for what `'fragmented'` and `'hostile'` add; here that is text,
 * thinking (with its signature), cited text, server tool and MCP blocks between the calls, `ping`s,
 * `caller` on the blocks, and continuation turns that carry their calls whole in `message_start`
 * (programmatic tool calling); a hostile stream is cut off, ends in an `error` event or a
 * `max_tokens`/`refusal` stop with a block open, replays blocks under their id, or holds junk (deltas
 * of unknown blocks, fields of the wrong type, blocks outside the message).
 *
 * Pipe `events` into `fromAnthropicStream` (as an Observable: `from(stream.events)`), or through the
 * SDK's own parser with `scriptedStream('anthropic', stream.events)`.
 *
 * @param options The calls (an arbitrary, e.g. `toolCalls({ tools })`) and the `mode`.
 * @throws {TestingOptionError} for a bad `mode` or `calls`.
 *
 * @example
 * ```ts
 * import { fromAnthropicStream } from 'toolstream/anthropic';
 * import { anthropicStreams, scriptedStream, toolCalls } from 'toolstream/testing';
 *
 * await fc.assert(
 *   fc.asyncProperty(anthropicStreams({ calls: toolCalls({ tools }), mode: 'fragmented' }), async (stream) => {
 *     const results = await pipeline.run(fromAnthropicStream(scriptedStream('anthropic', stream.events)));
 *     expect(results.map((r) => r.id)).toEqual(stream.calls.map((c) => c.id));
 *   }),
 * );
 * ```
 */
export function anthropicStreams(options: ModelStreamOptions): fc.Arbitrary<ModelStream<RawMessageStreamEvent>> {
  const { mode, calls } = streamOptions('anthropicStreams', options);
  return calls.chain((list) => {
    const whole = mode === 'valid' ? messageOf(list, 8, false) : fc.oneof({ weight: 5, arbitrary: messageOf(list, 48, true) }, { weight: 1, arbitrary: continuation(list) });
    return inMode(mode, whole, BREAKAGE);
  }) as unknown as fc.Arbitrary<ModelStream<RawMessageStreamEvent>>;
}

/** The calls streamed as `tool_use` blocks of one message (with other blocks around them when `quirks`). */
function messageOf(calls: readonly StreamedCall[], maxPieces: number, quirks: boolean): fc.Arbitrary<ModelStream<Event>> {
  return fc
    .record({
      id: token(24),
      model: fc.constantFrom(...MODELS),
      pieces: fc.tuple(...calls.map((call) => jsonFragments(call.text, { maxPieces }))),
      lead: fc.option(textBlock),
      noise: fc.array(fc.record({ at: fc.nat(), blocks: noiseBlocks }), { maxLength: quirks ? 3 : 0 }),
      caller: quirks ? fc.boolean() : fc.constant(false),
      pings: fc.array(fc.nat(), { maxLength: quirks ? 3 : 0 }),
    })
    .map(({ id, model, pieces, lead, noise, caller, pings }) => {
      const turn = `msg_01${id}`;
      const callBlocks = calls.map((call, i): BlockSpec[] => [toolUseBlock(call.id, call.name, pieces[i]!, caller)]);
      const blocks = [...(lead === null ? [] : [lead]), ...insertAt(callBlocks, noise.map(({ at, blocks }) => ({ at, item: blocks }))).flat()];
      const content: Event[] = blocks.flatMap((block, index) => [
        { type: 'content_block_start', index, content_block: block.start },
        ...block.deltas.map((delta) => ({ type: 'content_block_delta', index, delta })),
        { type: 'content_block_stop', index },
      ]);
      const stop = calls.length > 0 ? 'tool_use' : 'end_turn';
      const events: Event[] = [
        messageStart(turn, model, [], null),
        ...insertAt(content, pings.map((at) => ({ at, item: { type: 'ping' } }))),
        { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 + content.length } },
        { type: 'message_stop' },
      ];
      // A block that got only empty fragments (a tool without parameters) is `'{}'` to the adapter, as to the SDK.
      return { mode: 'valid', turn, events, calls: calls.map((call) => emitted(call.id, call.name, call.text === '' ? '{}' : call.text, turn)) };
    });
}

/**
 * A continuation turn of programmatic tool calling (`vercel-anthropic-programmatic`): the calls come
 * whole in `message_start.message.content`, with their `caller`, and the message stops at once. Only
 * for calls whose arguments are a small plain JSON object (that is what `input` holds: a value in the
 * event, where a hostile nesting thousands deep would overflow the stack of whoever serialises it);
 * otherwise the calls are streamed as blocks.
 */
function continuation(calls: readonly StreamedCall[]): fc.Arbitrary<ModelStream<Event>> {
  const small = (text: string) => text.length <= 10_000 && isJsonObject(text) && !text.includes('__proto__') && nesting(text) <= 32;
  if (calls.length === 0 || !calls.every((call) => small(call.text))) return messageOf(calls, 48, true);
  return fc.record({ id: token(24), model: fc.constantFrom(...MODELS), tool: token(24) }).map(({ id, model, tool }) => {
    const turn = `msg_01${id}`;
    const caller = { type: 'code_execution_20250825', tool_id: `srvtoolu_01${tool}` };
    const content = calls.map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.text) as unknown, caller }));
    const events: Event[] = [messageStart(turn, model, content, 'tool_use'), { type: 'message_stop' }];
    return { mode: 'valid', turn, events, calls: calls.map((call) => emitted(call.id, call.name, JSON.parse(call.text) as unknown, turn)) };
  });
}

/** How deep brackets nest in a JSON text (outside strings). */
function nesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') deepest = Math.max(deepest, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return deepest;
}

function messageStart(id: string, model: string, content: readonly unknown[], stopReason: string | null): Event {
  return {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 502, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 4, service_tier: 'standard' },
    },
  };
}

const KNOWN_TYPES = ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop', 'ping'];

/** How Anthropic streams break (see `anthropicStreams`). */
const BREAKAGE: Breakage<Event> = {
  junk: fc.oneof(
    fc.constantFrom<Event>(
      { type: 'content_block_delta', index: 99, delta: { type: 'input_json_delta', partial_json: '{"x":' } },
      { type: 'content_block_stop', index: 'zero' },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 42, name: null, input: 'x' } },
      { type: 'content_block_start', index: 7, content_block: { type: 'tool_use', id: 'toolu_junk', name: 'unknown_tool', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 17 } },
      { type: 'message_stop' },
      { type: 'mystery_event', payload: [1, 2, 3] },
      { type: 'ping' },
    ),
    fc.record(
      { type: fc.constantFrom(...KNOWN_TYPES), index: fc.jsonValue(), delta: fc.jsonValue(), content_block: fc.jsonValue(), message: fc.jsonValue() },
      { requiredKeys: ['type'] },
    ),
  ),
  endings: fc.constantFrom<readonly Event[]>(
    [{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
    [{ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 4096 } }, { type: 'message_stop' }],
    [{ type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: 12 } }, { type: 'message_stop' }],
    [{ type: 'message_stop' }],
  ),
};
