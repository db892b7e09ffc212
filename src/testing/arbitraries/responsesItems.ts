import fc from 'fast-check';
import { prose, token } from './modelStream.js';

/** A Responses event or item, as plain JSON (its `sequence_number` is given when the stream is assembled). */
export type Json = Record<string, unknown>;

/** One output item's events, given its `output_index`; `item` is the finished item, for `response.completed`. */
export interface ItemEvents {
  readonly events: (outputIndex: number) => Json[];
  readonly item: Json;
}

/** How a server streams a function call (see `functionCallItem`). */
export interface CallStyle {
  /** The `arguments.delta` events: none at all on LM Studio, which sends only the `.done` events. */
  readonly deltas: boolean;
  /** UUID item ids (DeepSeek, Bedrock Mantle) instead of `fc_…`. */
  readonly uuid: boolean;
  /** `obfuscation` on the deltas (OpenAI). */
  readonly obfuscation: boolean;
  /** A program's sub-call: `caller: { type: 'program' }`, still `in_progress` at `output_item.done` (OpenAI programmatic). */
  readonly program: boolean;
  /** `namespace` on the item (tool search's deferred tools). */
  readonly namespace: boolean;
}

export const OPENAI_STYLE: CallStyle = { deltas: true, uuid: false, obfuscation: true, program: false, namespace: false };

/** The ways of streaming a call the recordings show. */
export const callStyle: fc.Arbitrary<CallStyle> = fc.record({
  deltas: fc.constantFrom(true, true, true, false),
  uuid: fc.boolean(),
  obfuscation: fc.boolean(),
  program: fc.constantFrom(false, false, false, true),
  namespace: fc.constantFrom(false, false, false, true),
});

/**
 * A `function_call` item: added, its argument deltas, `function_call_arguments.done`, `output_item.done`.
 * `n` (the call's position) makes its item id unique within the response: deltas are matched to their
 * call by item id.
 */
export function functionCallItem(callId: string, name: string, text: string, pieces: readonly string[], style: CallStyle, suffix: string, n: number): ItemEvents {
  const hex = [...suffix].map((c) => (c.charCodeAt(0) % 16).toString(16)).join('');
  const id = style.uuid ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4e3a-883b-${String(n).padStart(12, '0')}` : `fc_${suffix}${n}`;
  const extra: Json = {
    ...(style.program ? { caller: { type: 'program', caller_id: 'call_voPdoCqf8APY4DMpam3bdmxq' } } : {}),
    ...(style.namespace ? { namespace: name } : {}),
  };
  const item = (status: string, args: string): Json => ({ id, type: 'function_call', status, arguments: args, call_id: callId, name, ...extra });
  const done = item(style.program ? 'in_progress' : 'completed', text);
  return {
    item: done,
    events: (output_index) => [
      { type: 'response.output_item.added', item: item('in_progress', ''), output_index },
      ...(style.deltas
        ? pieces.map((delta) => ({ type: 'response.function_call_arguments.delta', delta, item_id: id, output_index, ...(style.obfuscation ? { obfuscation: 'kx8' } : {}) }))
        : []),
      { type: 'response.function_call_arguments.done', arguments: text, item_id: id, output_index },
      { type: 'response.output_item.done', item: done, output_index },
    ],
  };
}

/** Reasoning with a summary (OpenAI), or with its text (LM Studio's `reasoning_text`). */
const reasoningItem: fc.Arbitrary<ItemEvents> = fc.tuple(token(24), prose, fc.boolean()).map(([suffix, pieces, summary]) => {
  const id = `rs_${suffix}`;
  const text = pieces.join('');
  const item = summary ? { id, type: 'reasoning', summary: [{ type: 'summary_text', text }] } : { id, type: 'reasoning', content: [{ type: 'reasoning_text', text }], summary: [] };
  return {
    item,
    events: (output_index) => [
      { type: 'response.output_item.added', item: { id, type: 'reasoning', summary: [] }, output_index },
      ...(summary
        ? [
            { type: 'response.reasoning_summary_part.added', item_id: id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } },
            ...pieces.map((delta) => ({ type: 'response.reasoning_summary_text.delta', item_id: id, output_index, summary_index: 0, delta, obfuscation: '2ajSAGID' })),
            { type: 'response.reasoning_summary_text.done', item_id: id, output_index, summary_index: 0, text },
            { type: 'response.reasoning_summary_part.done', item_id: id, output_index, summary_index: 0, part: { type: 'summary_text', text } },
          ]
        : [
            ...pieces.map((delta) => ({ type: 'response.reasoning_text.delta', item_id: id, output_index, content_index: 0, delta })),
            { type: 'response.reasoning_text.done', item_id: id, output_index, content_index: 0, text },
          ]),
      { type: 'response.output_item.done', item, output_index },
    ],
  };
});

/** An assistant message, at times with a citation (xAI) and a `phase` (OpenAI's commentary). */
const messageItem: fc.Arbitrary<ItemEvents> = fc.tuple(token(24), prose, fc.boolean(), fc.boolean()).map(([suffix, pieces, cited, phase]) => {
  const id = `msg_${suffix}`;
  const text = pieces.join('');
  const annotations = cited ? [{ type: 'url_citation', url: 'https://example.com/status/1' }] : [];
  const part = (content: string) => ({ type: 'output_text', annotations: content === '' ? [] : annotations, logprobs: [], text: content });
  const item = { id, type: 'message', status: 'completed', content: [part(text)], ...(phase ? { phase: 'commentary' } : {}), role: 'assistant' };
  return {
    item,
    events: (output_index) => [
      { type: 'response.output_item.added', item: { ...item, status: 'in_progress', content: [] }, output_index },
      { type: 'response.content_part.added', item_id: id, output_index, content_index: 0, part: part('') },
      ...pieces.map((delta) => ({ type: 'response.output_text.delta', item_id: id, output_index, content_index: 0, delta, logprobs: [] })),
      ...(cited ? [{ type: 'response.output_text.annotation.added', annotation: annotations[0], annotation_index: 0, content_index: 0, item_id: id, output_index }] : []),
      { type: 'response.output_text.done', item_id: id, output_index, content_index: 0, text, logprobs: [] },
      { type: 'response.content_part.done', item_id: id, output_index, content_index: 0, part: part(text) },
      { type: 'response.output_item.done', item, output_index },
    ],
  };
});

/** A server-side web search (xAI, OpenAI): not a client call. */
const webSearchItem: fc.Arbitrary<ItemEvents> = token(24).map((suffix) => {
  const id = `ws_${suffix}`;
  const item = { id, type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'news', sources: [] } };
  return {
    item,
    events: (output_index) => [
      { type: 'response.output_item.added', item: { ...item, status: 'in_progress' }, output_index },
      { type: 'response.web_search_call.in_progress', item_id: id, output_index },
      { type: 'response.web_search_call.searching', item_id: id, output_index },
      { type: 'response.web_search_call.completed', item_id: id, output_index },
      { type: 'response.output_item.done', item, output_index },
    ],
  };
});

/** Hosted tool search (`call_id: null`), its output, and a program that calls tools (OpenAI): none a client call. */
const serverItem: fc.Arbitrary<ItemEvents> = fc.tuple(token(24), fc.constantFrom('tool_search_call', 'tool_search_output', 'program')).map(([suffix, type]) => {
  const item =
    type === 'tool_search_call'
      ? { id: `tsc_${suffix}`, type, status: 'completed', arguments: { paths: ['get_weather'] }, call_id: null, execution: 'server' }
      : type === 'tool_search_output'
        ? { id: `tso_${suffix}`, type, status: 'completed', call_id: null, execution: 'server', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }] }
        : { id: `cm_${suffix}`, type, call_id: `call_${suffix}`, code: 'const a = await tools.getInventory({});', fingerprint: suffix };
  const added = type === 'program' ? { ...item, code: '' } : { ...item, status: 'in_progress' };
  return { item, events: (output_index) => [{ type: 'response.output_item.added', item: added, output_index }, { type: 'response.output_item.done', item, output_index }] };
});

/** xAI's own search, reported as a `custom_tool_call` of a tool the client never declared: not a client call. */
const serverCustomItem: fc.Arbitrary<ItemEvents> = token(8).map((suffix) => {
  const id = `ctc_${suffix}_xs_call_${suffix}`;
  const input = '{"query":"from:xai","limit":20}';
  const item = { call_id: `xs_call_${suffix}`, input, name: 'x_keyword_search', type: 'custom_tool_call', id, status: 'completed' };
  return {
    item,
    events: (output_index) => [
      { type: 'response.output_item.added', item: { ...item, input: '', status: 'in_progress' }, output_index },
      { type: 'response.custom_tool_call_input.delta', item_id: id, output_index, delta: input },
      { type: 'response.custom_tool_call_input.done', item_id: id, output_index, input },
      { type: 'response.output_item.done', item, output_index },
    ],
  };
});

/** Output items that carry no client call, as the recordings have them around the calls. */
export const noiseItem: fc.Arbitrary<ItemEvents> = fc.oneof(reasoningItem, messageItem, webSearchItem, serverItem, serverCustomItem);
