import fc from 'fast-check';
import { TestingOptionError } from '../errors.js';

/** Texts up to this long may be split into one-character pieces (longer ones into at most `maxPieces`). */
const CHARACTER_PIECES_UP_TO = 256;

/**
 * How `jsonFragments` may split a text.
 *
 * @example
 * ```ts
 * const few: JsonFragmentsOptions = { maxPieces: 4 };
 * ```
 */
export interface JsonFragmentsOptions {
  /** The most pieces a text is cut into (empty pieces not counted). @default 48 */
  readonly maxPieces?: number;
}

/**
 * The ways a model stream splits one call's arguments text into pieces, as the recorded streams do:
 * the whole text in one piece (Groq, Ollama, LM Studio), an empty piece first (Anthropic's first
 * `input_json_delta`, OpenAI's first `arguments: ""`), one character per piece, or cut at random
 * points — and, at times, an empty piece at the end (DashScope's trailing fragment). The pieces always
 * join back to `text`; where they are cut is what a parser must not depend on.
 *
 * @param text The arguments as JSON text (or any text: a bad one is split the same way).
 * @param options `maxPieces`.
 * @returns Arrays of at least one piece whose concatenation is `text`.
 * @throws {TestingOptionError} when `text` is not a string or `maxPieces` not a positive integer.
 *
 * @example
 * ```ts
 * fc.assert(
 *   fc.property(jsonFragments('{"path":"README.md"}'), (pieces) => {
 *     expect(pieces.join('')).toBe('{"path":"README.md"}');
 *   }),
 * );
 * ```
 */
export function jsonFragments(text: string, options: JsonFragmentsOptions = {}): fc.Arbitrary<readonly string[]> {
  const maxPieces = options.maxPieces ?? 48;
  if (typeof text !== 'string') throw new TestingOptionError('jsonFragments', 'text', 'a string', text);
  if (!Number.isInteger(maxPieces) || maxPieces < 1) throw new TestingOptionError('jsonFragments', 'maxPieces', 'a positive integer', maxPieces);
  const shapes: fc.Arbitrary<readonly string[]>[] = [fc.constant([text])];
  if (text.length > 1) {
    if (text.length <= CHARACTER_PIECES_UP_TO && text.length <= maxPieces) shapes.push(fc.constant([...splitCharacters(text)]));
    if (maxPieces > 1) {
      const cuts = fc.uniqueArray(fc.integer({ min: 1, max: text.length - 1 }), { minLength: 1, maxLength: Math.min(text.length - 1, maxPieces - 1) });
      shapes.push(cuts.map((at) => cutAt(text, at)));
    }
  }
  return fc
    .tuple(fc.oneof(...shapes), fc.boolean(), fc.integer({ min: 0, max: 7 }))
    .map(([pieces, leadingEmpty, trailing]) => [...(leadingEmpty ? [''] : []), ...pieces, ...(trailing === 0 ? [''] : [])]);
}

/** One piece per UTF-16 unit: a stream may cut between the halves of a surrogate pair, and JSON carries each half escaped. */
function splitCharacters(text: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i++) pieces.push(text[i]!);
  return pieces;
}

function cutAt(text: string, cuts: readonly number[]): string[] {
  const sorted = [...cuts].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const at of sorted) {
    pieces.push(text.slice(from, at));
    from = at;
  }
  pieces.push(text.slice(from));
  return pieces;
}
