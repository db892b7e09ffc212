import { describeValue } from './describe.js';
import { ConfigError } from './errors.js';
import { isCount } from './validate.js';

/**
 * How much of a tool's text output the model may see; a limit left out is no limit.
 *
 * @example
 * ```ts
 * const budget: TextBudget = { maxLines: 200, maxChars: 20_000, keep: 'head+tail' };
 * ```
 */
export interface TextBudget {
  /** Characters (UTF-16 code units, as `length` counts them) of the original to show. @default Infinity */
  readonly maxChars?: number;
  /** Lines of the original to show, wholly or in part; a line ends with `'\n'` or the text. @default Infinity */
  readonly maxLines?: number;
  /** Show the start, or the start and the end (the head gets the odd unit of an even split). @default 'head' */
  readonly keep?: 'head' | 'head+tail';
}

/**
 * The text as the model will see it, with exact counts of what was cut.
 *
 * @example
 * ```ts
 * const { text, omittedChars, truncated } = retainText(stdout, { maxChars: 20_000 });
 * ```
 */
export interface RetainedText {
  /** The kept head, the omission note on its own line (when something was cut), then the kept tail. */
  readonly text: string;
  /** Characters of the original that are not in `text` (the note itself is not counted). */
  readonly omittedChars: number;
  /** Whole lines of the original that are not in `text`; a line cut only in part does not count. */
  readonly omittedLines: number;
  /** Whether anything was cut. When false, `text` is the original, unchanged. */
  readonly truncated: boolean;
}

/**
 * A validated {@link TextBudget}, to build once (per tool, or as the pipeline's default) and apply to
 * every output. See {@link retainText} for the rules.
 *
 * @throws {ConfigError} when the budget is malformed; `option` names the field (`maxChars`, `maxLines`,
 *   `keep`, or `budget` itself) and the message what was given.
 *
 * @example
 * ```ts
 * const retainer = new TextRetainer({ maxLines: 200, maxChars: 20_000, keep: 'head+tail' });
 * const { text, omittedChars } = retainer.retain(stdout);
 * ```
 */
export class TextRetainer {
  /** The budget with its defaults filled in. */
  readonly budget: Readonly<Required<TextBudget>>;

  constructor(budget: TextBudget) {
    this.budget = validBudget(budget, 'TextRetainer');
  }

  /**
   * Cut `text` down to the budget. See {@link retainText} for the rules.
   *
   * @throws {TypeError} when `text` is not a string (a value, not configuration).
   *
   * @example
   * ```ts
   * new TextRetainer({ maxLines: 1 }).retain('a\nb\nc\n').text; // 'a\n[... 2 lines omitted]'
   * ```
   */
  retain(text: string): RetainedText {
    return retainWithin(text, this.budget, 'TextRetainer');
  }
}

/**
 * Bound a tool's text output before it reaches the model: the line budget first, then the character
 * budget on what remains, with an in-band note on its own line where the cut is (between head and tail).
 *
 * 1. The note reads `[... 12 lines omitted]` when the cut is on line boundaries, `[... 1234 characters
 *    omitted]` when it is inside a line, `[... 12 lines, 1234 characters omitted]` when it is inside a
 *    line and whole lines went too (1234 is every omitted character, those of the 12 lines included).
 * 2. A line ends with `'\n'` or the text; a trailing `'\n'` does not start an empty line (`'a\n'` is one).
 * 3. The note is outside the budget: the kept text is within it, while `text` may be longer than
 *    `maxChars` by the note and its newlines, and show up to two more lines than `maxLines` (the note's,
 *    and the second piece of a line that a head+tail character cut split in two).
 * 4. A cut never splits a surrogate pair: it moves to keep one code unit less.
 * 5. Text within budget comes back unchanged, with zero counts.
 *
 * @throws {ConfigError} when the budget is malformed; `option` names the field (`maxChars`, `maxLines`,
 *   `keep`, or `budget` itself) and the message what was given.
 * @throws {TypeError} when `text` is not a string (a value, not configuration).
 *
 * @example
 * ```ts
 * retainText('1\n2\n3\n4\n5\n', { maxLines: 2, keep: 'head+tail' });
 * // { text: '1\n[... 3 lines omitted]\n5\n', omittedChars: 6, omittedLines: 3, truncated: true }
 * ```
 */
export function retainText(text: string, budget: TextBudget): RetainedText {
  return retainWithin(text, validBudget(budget, 'retainText'), 'retainText');
}

function validBudget(budget: TextBudget, where: 'TextRetainer' | 'retainText'): Readonly<Required<TextBudget>> {
  const fail = (field: string, expected: string, received: unknown): never => {
    throw new ConfigError(where, field, expected, received);
  };
  if (typeof budget !== 'object' || budget === null) fail('budget', 'an object', budget);
  const { maxChars = Infinity, maxLines = Infinity, keep = 'head' } = budget;
  if (!isLimit(maxChars)) fail('maxChars', 'a positive integer or Infinity', maxChars);
  if (!isLimit(maxLines)) fail('maxLines', 'a positive integer or Infinity', maxLines);
  if (keep !== 'head' && keep !== 'head+tail') fail('keep', '"head" or "head+tail"', keep);
  return Object.freeze({ maxChars, maxLines, keep });
}

function retainWithin(text: string, { maxChars, maxLines, keep }: Required<TextBudget>, where: string): RetainedText {
  if (typeof text !== 'string') throw new TypeError(`${where}: text must be a string; received ${describeValue(text)}`);
  const len = text.length;
  const both = keep === 'head+tail';
  let head = len; // the kept prefix is text[0, head)
  let tail = len; // the kept suffix is text[tail, len)
  // Lines first, cut on line boundaries, so that a line cut alone shows the model whole lines only.
  const afterBudget = maxLines === Infinity ? -1 : afterNewlines(text, maxLines);
  const lineCut = afterBudget !== -1 && afterBudget < len; // text remains after the last allowed line
  if (lineCut) {
    const headLines = both ? Math.ceil(maxLines / 2) : maxLines;
    head = afterNewlines(text, headLines);
    if (both) tail = tailStart(text, maxLines - headLines);
  }
  if (head + (len - tail) > maxChars) {
    let headShare = both ? Math.ceil(maxChars / 2) : maxChars;
    let tailShare = maxChars - headShare;
    // Without a line cut both ends draw on the whole text; after one, a short side lends its unused share.
    const tailAvail = lineCut ? len - tail : len;
    if (head < headShare) [headShare, tailShare] = [head, maxChars - head];
    else if (tailAvail < tailShare) [headShare, tailShare] = [maxChars - tailAvail, tailAvail];
    // Both moves shrink what is kept: a surrogate pair is kept whole or dropped whole, never halved.
    head = splitsPair(text, headShare) ? headShare - 1 : headShare;
    tail = splitsPair(text, len - tailShare) ? len - tailShare + 1 : len - tailShare;
  }
  if (head >= tail) return { text, omittedChars: 0, omittedLines: 0, truncated: false };
  const omittedChars = tail - head;
  const omittedLines = wholeLinesWithin(text, head, tail);
  const [lines, chars] = [plural(omittedLines, 'line'), plural(omittedChars, 'character')];
  const aligned = atLineStart(text, head) && atLineStart(text, tail); // only whole lines went
  const what = aligned ? lines : omittedLines === 0 ? chars : `${lines}, ${chars}`;
  // On its own line: a newline before it unless the head ends one, after it unless nothing follows.
  const note = `${atLineStart(text, head) ? '' : '\n'}[... ${what} omitted]${tail === len ? '' : '\n'}`;
  return { text: text.slice(0, head) + note + text.slice(tail), omittedChars, omittedLines, truncated: true };
}

const isLimit = (value: unknown): value is number => isCount(value, 1);

/** Just past the `n`-th newline, or -1 when there are fewer. */
function afterNewlines(text: string, n: number): number {
  let pos = -1;
  for (let i = 0; i < n; i++) if ((pos = text.indexOf('\n', pos + 1)) === -1) return -1;
  return pos + 1;
}

/** Where the last `n` lines start (a trailing newline ends the last line). */
function tailStart(text: string, n: number): number {
  if (n === 0) return text.length;
  let pos = text.endsWith('\n') ? text.length - 1 : text.length;
  for (let i = 0; i < n; i++) pos = text.lastIndexOf('\n', pos - 1);
  return pos + 1;
}

function atLineStart(text: string, index: number): boolean {
  return index === 0 || index === text.length || text[index - 1] === '\n';
}

/** Whether a cut at `index` would separate a high surrogate from its low one. */
function splitsPair(text: string, index: number): boolean {
  const [high, low] = [text.charCodeAt(index - 1), text.charCodeAt(index)];
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

/** How many lines lie wholly inside text[from, to). */
function wholeLinesWithin(text: string, from: number, to: number): number {
  let start = atLineStart(text, from) ? from : text.indexOf('\n', from) + 1;
  if (start === 0 && from > 0) return 0; // no line starts after `from`
  let count = 0;
  for (let end; start < to && (end = text.indexOf('\n', start) + 1 || text.length) <= to; start = end) count++;
  return count;
}

const plural = (count: number, unit: string): string => `${count} ${unit}${count === 1 ? '' : 's'}`;
