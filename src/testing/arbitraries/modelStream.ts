import fc from 'fast-check';
import type { ToolCall } from '../../types/toolCall.js';
import { TestingOptionError, type TestingFunction } from '../errors.js';

/**
 * How a generated model stream behaves.
 * - `'valid'`: the provider's reference shape (the official API's), the arguments cut at random points.
 * - `'fragmented'`: every quirk the recorded streams show that still carries the calls whole — one
 *   character per event, empty fragments, text, reasoning and server-side tool blocks between the calls,
 *   keep-alives, extra fields, gateways' ways of indexing, packing and finishing calls.
 * - `'hostile'`: a fragmented stream broken on purpose — cut off mid-call, an error event, the model
 *   stopping at its token limit, calls replayed under their id, junk events and fields of the wrong type.
 *
 * @example
 * ```ts
 * const mode: StreamMode = 'fragmented';
 * const streams = anthropicStreams({ calls: toolCalls({ tools }), mode });
 * ```
 */
export type StreamMode = 'valid' | 'fragmented' | 'hostile';

/**
 * Options of the stream arbitraries (`anthropicStreams`, `chatStreams`, `responsesStreams`).
 *
 * @example
 * ```ts
 * const options: ModelStreamOptions = { calls: toolCalls({ tools: { search: fc.record({ q: fc.string() }) } }), mode: 'hostile' };
 * ```
 */
export interface ModelStreamOptions {
  /** The calls the model makes in the response (from `toolCalls`, or any arbitrary of calls). */
  readonly calls: fc.Arbitrary<readonly ToolCall[]>;
  /** @default 'valid' */
  readonly mode?: StreamMode;
}

/**
 * One generated model response: its events, in order, and its calls.
 *
 * `calls`, for `'valid'` and `'fragmented'` streams, are exactly the calls the matching adapter emits
 * for `events` (`fromAnthropicStream`, `fromOpenAIChatStream`, `fromOpenAIResponsesStream`), in order:
 * the generated calls with `turn` set to the response's id (absent where the stream carries none), and
 * `args` as the adapter hands them over — the JSON text the fragments join to (`'{}'` for an empty one
 * on Anthropic), or the parsed input of a call that came whole in Anthropic's `message_start`. A
 * provider never repeats an id within a response, nor sends an empty one, so such an id is made unique
 * there (`_2`, `_3`…).
 * For `'hostile'` streams `calls` are the calls the stream was built from, before it was broken: what
 * comes out is whatever the adapter makes of the damage, and the property to check is that every call
 * received gets exactly one result, and that the run rejects with a `SourceError`, if at all.
 *
 * The events are typed as the SDK's; a hostile stream holds values that are not (junk on purpose).
 *
 * @example
 * ```ts
 * fc.assert(
 *   fc.asyncProperty(chatStreams({ calls: toolCalls({ tools }), mode: 'fragmented' }), async (stream) => {
 *     const received = await lastValueFrom(fromOpenAIChatStream(from(stream.events)).pipe(toArray()));
 *     expect(received).toEqual(stream.calls);
 *   }),
 * );
 * ```
 */
export interface ModelStream<E> {
  readonly mode: StreamMode;
  /** The response's id: the `turn` of its calls (`undefined` when the stream carries none). */
  readonly turn: string | undefined;
  readonly events: readonly E[];
  readonly calls: readonly ToolCall[];
}

/** A call as a stream carries it: its id made unique within the response, its arguments as text. */
export interface StreamedCall {
  readonly id: string;
  readonly name: string;
  readonly text: string;
}

/** The options, checked; the calls an arbitrary of `StreamedCall`s (ids made unique unless `hostile`). */
export function streamOptions(where: TestingFunction, options: ModelStreamOptions): { mode: StreamMode; calls: fc.Arbitrary<readonly StreamedCall[]> } {
  const mode = options?.mode ?? 'valid';
  if (mode !== 'valid' && mode !== 'fragmented' && mode !== 'hostile') {
    throw new TestingOptionError(where, 'mode', "'valid', 'fragmented' or 'hostile'", mode);
  }
  const calls: unknown = options?.calls;
  if (!isArbitrary(calls)) {
    throw new TestingOptionError(where, 'calls', 'a fast-check arbitrary of tool calls (e.g. toolCalls({ tools }))', calls);
  }
  return { mode, calls: options.calls.map((list) => streamedCalls(where, list, mode !== 'hostile')) };
}

/** An arbitrary of any copy of fast-check (a test may load another than this package's). */
export function isArbitrary(value: unknown): value is fc.Arbitrary<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const { generate, map, chain } = value as { generate?: unknown; map?: unknown; chain?: unknown };
  return typeof generate === 'function' && typeof map === 'function' && typeof chain === 'function';
}

function streamedCalls(where: TestingFunction, calls: readonly ToolCall[], uniqueIds: boolean): StreamedCall[] {
  const taken = new Set(calls.map((call) => call.id));
  const used = new Set<string>();
  return calls.map((call, i) => {
    if (typeof call?.id !== 'string' || typeof call.name !== 'string') {
      throw new TestingOptionError(where, `calls[${i}]`, 'a tool call with a string id and name', call);
    }
    let id = call.id;
    if (uniqueIds && (id === '' || used.has(id))) {
      const stem = id === '' ? 'call' : id;
      let n = 2;
      while (taken.has(`${stem}_${n}`) || used.has(`${stem}_${n}`)) n++;
      id = `${stem}_${n}`;
    }
    used.add(id);
    return { id, name: call.name, text: argumentsText(where, call.args, i) };
  });
}

/** The arguments as the JSON text a stream carries: a string is the text itself. */
function argumentsText(where: TestingFunction, args: unknown, i: number): string {
  if (typeof args === 'string') return args;
  let text: string | undefined;
  try {
    text = JSON.stringify(args);
  } catch (error) {
    throw new TestingOptionError(where, `calls[${i}].args`, 'JSON text or a value with a JSON form', error);
  }
  return text ?? '';
}

/** A call as an adapter emits it, in `turn`. */
export function emitted(id: string, name: string, args: unknown, turn: string | undefined): ToolCall {
  return turn === undefined ? { id, name, args } : { id, name, args, turn };
}

/** Letters and digits, as providers' ids and opaque tokens are made of. */
export const token = (length: number): fc.Arbitrary<string> => fc.stringMatching(new RegExp(`^[A-Za-z0-9]{${length}}$`));

/** Short natural-language text, cut into the pieces a model streams it in. */
export const prose: fc.Arbitrary<readonly string[]> = fc.array(
  fc.constantFrom('I', "'ll", ' check', ' the', ' weather', ' for', ' both', ' cities', '.', ' Let', ' me', ' look', '\n\n', ' **', '570', '** ', 'é', '💡'),
  { minLength: 1, maxLength: 8 },
);

/** Whether `text` parses as a JSON object: nothing can be missing from it. */
export function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** `items` with each insert placed before the item at `at % (length + 1)` (positions in `items`; at the end for `length`). */
export function insertAt<T>(items: readonly T[], inserts: readonly { readonly at: number; readonly item: T }[]): T[] {
  const before = new Map<number, T[]>();
  for (const { at, item } of inserts) {
    const position = at % (items.length + 1);
    const list = before.get(position) ?? [];
    list.push(item);
    before.set(position, list);
  }
  const out: T[] = [];
  for (let i = 0; i <= items.length; i++) {
    out.push(...(before.get(i) ?? []));
    if (i < items.length) out.push(items[i]!);
  }
  return out;
}
