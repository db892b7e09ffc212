import fc from 'fast-check';
import { jsonFragments } from './fragments.js';
import { isJsonObject, type StreamedCall } from './modelStream.js';

type Fragment = Record<string, unknown>;

/**
 * How a server numbers its calls' fragments: from 0 (OpenAI), from 1 (Anthropic's OpenAI-compatible
 * endpoint), every call at 0 with its own id (Ollama), or not at all (Mistral, Gemini).
 */
type Indexing = 'from0' | 'from1' | 'zero' | 'none';

/**
 * How a server cuts one call into fragments, as the recordings show:
 * - `openai`: id, type and name with `arguments: ""`, then arguments only;
 * - `whole`: the call in one fragment (Groq, Ollama, Mistral, Gemini, Copilot);
 * - `name-only`: the first fragment has the name and no `arguments` key (vLLM), and its continuations
 *   at times repeat `type` (Novita);
 * - `empty-id`: continuation fragments repeat `id: ""` and `type` and end with an empty one (DashScope);
 * - `empty-name`: continuation fragments repeat `name: ""` (GLM on Mistral);
 * - `null-args`: `arguments: null` for a tool without parameters (Meta behind OpenRouter).
 */
type Cutting = 'openai' | 'whole' | 'name-only' | 'empty-id' | 'empty-name' | 'null-args';

/** How one stream's calls are cut into fragments. */
export interface ChatCutting {
  readonly indexing: Indexing;
  /** Whether first fragments carry `type: 'function'`. */
  readonly typed: boolean;
  /** Each call's cutting (`openai` for every call of a `valid` stream). */
  readonly cuttings: readonly Cutting[];
  /** Each call's argument pieces. */
  readonly pieces: readonly (readonly string[])[];
  /** Continuation fragments repeat `type: 'function'` (Novita). */
  readonly typedContinuations: boolean;
  /** Calls sent again whole under their id right after (Novita): a server's repeat, dropped by the reader. */
  readonly resent: readonly boolean[];
}

/** The cutting of a stream's calls: OpenAI's for `valid`, any the recordings show otherwise. */
export function chatCutting(calls: readonly StreamedCall[], quirks: boolean): fc.Arbitrary<ChatCutting> {
  const maxPieces = quirks ? 48 : 8;
  return fc.record({
    indexing: quirks ? fc.constantFrom<Indexing>('from0', 'from0', 'from1', 'zero', 'none') : fc.constant<Indexing>('from0'),
    typed: quirks ? fc.boolean() : fc.constant(true),
    cuttings: fc.tuple(...calls.map((call) => (quirks ? cuttingOf(call) : fc.constant<Cutting>('openai')))),
    pieces: fc.tuple(...calls.map((call) => jsonFragments(call.text, { maxPieces }))),
    typedContinuations: quirks ? fc.boolean() : fc.constant(false),
    // Only an object, under a name, can be re-sent: the reader knows a repeat when the call's arguments are complete.
    resent: fc.tuple(...calls.map((call) => (quirks && isJsonObject(call.text) ? fc.boolean() : fc.constant(false)))),
  });
}

function cuttingOf(call: StreamedCall): fc.Arbitrary<Cutting> {
  const kinds: Cutting[] = ['openai', 'openai', 'whole', 'name-only', 'empty-id', 'empty-name'];
  // `arguments: null` stands for no arguments: only where the call has none.
  if (call.text === '{}' || call.text === '') kinds.push('null-args');
  return fc.constantFrom(...kinds);
}

/** The fragments of every call, in order (the expected arguments text per call comes with them). */
export function chatFragments(calls: readonly StreamedCall[], cutting: ChatCutting): { fragments: Fragment[]; args: string[] } {
  const fragments: Fragment[] = [];
  const args: string[] = [];
  calls.forEach((call, i) => {
    const index = cutting.indexing === 'none' ? undefined : cutting.indexing === 'zero' ? 0 : cutting.indexing === 'from1' ? i + 1 : i;
    const at = index === undefined ? {} : { index };
    const type = cutting.typed ? { type: 'function' } : {};
    const kind = cutting.cuttings[i]!;
    const pieces = cutting.pieces[i]!;
    const first = (fn: Fragment): Fragment => ({ ...at, id: call.id, ...type, function: fn });
    const more = (fn: Fragment, extra: Fragment = {}): Fragment => ({ ...at, ...extra, function: fn });
    switch (kind) {
      case 'whole':
        fragments.push(first({ name: call.name, arguments: call.text }));
        args.push(call.text);
        break;
      case 'null-args':
        fragments.push(first({ name: call.name, arguments: null }));
        args.push('');
        break;
      case 'name-only':
        fragments.push(first({ name: call.name }), ...pieces.map((piece) => more({ arguments: piece }, cutting.typedContinuations ? { type: 'function' } : {})));
        args.push(call.text);
        break;
      case 'empty-id':
        fragments.push(
          first({ name: call.name, arguments: pieces[0]! }),
          ...pieces.slice(1).map((piece) => more({ arguments: piece }, { id: '', type: 'function' })),
          more({ arguments: '' }, { id: '', type: 'function' }),
        );
        args.push(call.text);
        break;
      case 'empty-name':
        fragments.push(first({ name: call.name, arguments: '' }), ...pieces.map((piece) => more({ name: '', arguments: piece }, { type: 'function' })));
        args.push(call.text);
        break;
      case 'openai':
        fragments.push(first({ name: call.name, arguments: '' }), ...pieces.map((piece) => more({ arguments: piece })));
        args.push(call.text);
        break;
    }
    if (cutting.resent[i] === true && call.name !== '' && args[i] === call.text) fragments.push(first({ name: call.name, arguments: call.text }));
  });
  return { fragments, args };
}
