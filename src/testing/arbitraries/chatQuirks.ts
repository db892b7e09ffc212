import fc from 'fast-check';
import type { Breakage } from './hostileStream.js';
import { prose, token } from './modelStream.js';

/** A chunk, a choice, a delta or a fragment, as plain JSON. */
export type Chunk = Record<string, unknown>;

/** What a server adds to the chunks of a response besides the calls (see `chunkExtras`). */
export interface ChunkExtras {
  /** Top-level fields of every chunk. */
  readonly chunk: Chunk;
  /** Fields of every choice. */
  readonly choice: Chunk;
  /** Fields beside `tool_calls` in the calls' deltas. */
  readonly delta: Chunk;
  /** Chunks before the response's own (Azure's prompt filter results). */
  readonly first: readonly Chunk[];
  /** Fields of the usage chunk. */
  readonly last: Chunk;
  /** `native_finish_reason` beside `finish_reason` (OpenRouter). */
  readonly nativeFinish: boolean;
}

/** OpenAI's own chunks (`valid` streams). */
export const OPENAI_EXTRAS: ChunkExtras = {
  chunk: { system_fingerprint: 'fp_f33640a400', service_tier: 'default' },
  choice: { logprobs: null },
  delta: {},
  first: [],
  last: {},
  nativeFinish: false,
};

const FILTER = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };

/** Fields gateways and servers add to every chunk, as recorded. */
const CHUNK_FIELDS: Readonly<Record<string, unknown>> = {
  system_fingerprint: 'fp_e8236260a9',
  service_tier: 'default',
  obfuscation: 'cpf',
  provider: 'OpenAI',
  x_groq: { id: 'req_01kkht5b3yfqdt97w99bdntjns', seed: 690443319 },
  generationId: 'gen_01K5Z9JQ4X6V7',
  latency_checkpoint: { engine_tbt_ms: 10 },
  p: 'abcdefghijklmnopqrstuvwxyz0123',
  usage: null,
};

/** Fields servers add to every choice. */
const CHOICE_FIELDS: Readonly<Record<string, unknown>> = {
  logprobs: null,
  stop_reason: null,
  content_filter_results: FILTER,
};

/** Fields beside `tool_calls` in a delta. */
const DELTA_FIELDS: Readonly<Record<string, unknown>> = {
  role: 'assistant',
  content: null,
  refusal: null,
  reasoning_opaque: 'lgxMQq0m/J6cVjsaH8bbfhxHtAvK4Y',
  index: 0,
};

const pick = (fields: Readonly<Record<string, unknown>>): fc.Arbitrary<Chunk> =>
  fc.subarray(Object.keys(fields)).map((keys) => Object.fromEntries(keys.map((key) => [key, fields[key]])));

/** What one server adds to its chunks: any mix of the fields the recordings show. */
export const chunkExtras: fc.Arbitrary<ChunkExtras> = fc.record({
  chunk: pick(CHUNK_FIELDS),
  choice: pick(CHOICE_FIELDS),
  delta: pick(DELTA_FIELDS),
  first: fc.constantFrom<readonly Chunk[]>(
    [],
    [{ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTER }] }],
  ),
  last: fc.constantFrom<Chunk>({}, { timings: { prompt_n: 1, predicted_n: 41 } }, { x_groq: { id: 'req_01kkht5b3yfqdt97w99bdntjns', usage: { queue_time: 0.2 } } }),
  nativeFinish: fc.boolean(),
});

/** Deltas before the calls: the role, text, reasoning in each server's field, a gateway's metadata. */
export const preambleDelta: fc.Arbitrary<Chunk> = fc.oneof(
  fc.constantFrom<Chunk>(
    { role: 'assistant', content: '' },
    { role: 'assistant', content: null, refusal: null },
    { role: 'assistant' },
    {},
    { content: '', index: 0 },
    { provider_metadata: { anthropic: { usage: { input_tokens: 502, output_tokens: 137 } } } },
    { reasoning_details: [{ type: 'reasoning.summary', summary: '**Locating file**', format: 'openai-responses-v1', index: 0 }] },
    { content: '<tool_call>\n<function=read_file>' },
  ),
  prose.map((pieces): Chunk => ({ content: pieces.join('') })),
  prose.map((pieces): Chunk => ({ reasoning_content: pieces.join('') })),
  prose.map((pieces): Chunk => ({ reasoning: pieces.join(''), channel: 'analysis' })),
  prose.map((pieces): Chunk => ({ role: 'assistant', content: '', reasoning: pieces.join(''), reasoning_details: [{ type: 'reasoning.text', text: pieces.join(''), index: 0 }] })),
  prose.map((pieces): Chunk => ({ role: 'assistant', content: '', reasoning_text: pieces.join('') })),
  prose.map((pieces): Chunk => ({ role: 'assistant', content: pieces.join(''), refusal: null })),
);

const choiceWith = (delta: unknown, more: Chunk = {}): Chunk => ({ id: 'chatcmpl-junk', object: 'chat.completion.chunk', choices: [{ index: 0, delta, ...more }] });

/** How Chat Completions streams break (see `chatStreams`). */
export const CHAT_BREAKAGE: Breakage<Chunk> = {
  junk: fc.oneof(
    fc.constantFrom<Chunk>(
      { choices: 'nope' },
      { choices: [null] },
      choiceWith({ tool_calls: 'x' }),
      choiceWith({ tool_calls: [{ index: '0', id: 5, function: { name: 7, arguments: {} } }] }),
      choiceWith({ tool_calls: [{ index: 0, function: { arguments: '}}}' } }] }),
      choiceWith({ tool_calls: [{ index: 9, id: 'call_injected', type: 'function', function: { name: 'unknown_tool', arguments: '{}' } }] }),
      { id: 'chatcmpl-junk', choices: [{ index: 1, delta: { tool_calls: [{ index: 0, id: 'call_choice1', function: { name: 'x', arguments: '{}' } }] } }] },
      choiceWith(null, { finish_reason: 42 }),
    ),
    token(8).map((id): Chunk => choiceWith({ tool_calls: [{ index: 0, id: `call_${id}`, type: 'function', function: { name: 'read_file', arguments: '{"pa' } }] })),
    fc.jsonValue().map((value) => value as Chunk),
  ),
  endings: fc.constantFrom<readonly Chunk[]>(
    [{ error: { message: 'Tool call validation failed', type: 'invalid_request_error', code: 'tool_use_failed' } }],
    [choiceWith({}, { finish_reason: 'length' })],
    [choiceWith({ content: '' }, { finish_reason: 'content_filter' })],
    [],
  ),
};
