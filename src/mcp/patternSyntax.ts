/**
 * A parser for the regular expressions of JSON Schema `pattern`s as zod compiles them: JavaScript
 * syntax without flags (`new RegExp(pattern)`, so UTF-16 code units, Annex B). It reads a
 * deliberately small subset — literals, `.`, classes, `\d \w \s` and their negations, character
 * escapes, groups, alternation, greedy and lazy quantifiers, `^ $ \b \B` — and gives up
 * (`undefined`) on everything else: backreferences, lookarounds, modifiers, legacy octal escapes,
 * identity escapes of letters, a literal `{`. Giving up is always safe: the pattern is then left to
 * the server to check.
 */

/** Sorted, disjoint, inclusive ranges of UTF-16 code units. */
export type CharSet = readonly (readonly [number, number])[];

/** A parsed pattern. */
export type PatternNode =
  /** One code unit from `set`. */
  | { readonly kind: 'chars'; readonly set: CharSet }
  | { readonly kind: 'seq'; readonly items: readonly PatternNode[] }
  | { readonly kind: 'alt'; readonly options: readonly PatternNode[] }
  /** `body{min,max}`; `max` is `Infinity` for `*`, `+` and `{n,}`. */
  | { readonly kind: 'repeat'; readonly body: PatternNode; readonly min: number; readonly max: number; readonly greedy: boolean }
  | { readonly kind: 'assert'; readonly what: '^' | '$' | 'b' | 'B' };

/** Counted quantifiers above this are not read: a linear bound is no comfort if its constant is huge. */
const MAX_COUNT = 1000;
const MAX_UNIT = 0xffff;

const DIGITS: CharSet = [[0x30, 0x39]];
const WORD: CharSet = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
// WhiteSpace and LineTerminator, as `\s` means them.
const SPACE: CharSet = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const LINE_TERMINATORS: CharSet = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];
const CONTROL_ESCAPES: Readonly<Record<string, number>> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };
const CLASS_ESCAPES: Readonly<Record<string, CharSet>> = {
  d: DIGITS,
  D: complement(DIGITS),
  w: WORD,
  W: complement(WORD),
  s: SPACE,
  S: complement(SPACE),
};
/** `.` without the `s` flag: any code unit but a line terminator. */
const DOT: CharSet = complement(LINE_TERMINATORS);

/** Thrown inside the parser for syntax outside the subset; never escapes {@link parsePattern}. */
class Unsupported extends Error {}

/**
 * The pattern's syntax tree, or `undefined` when it uses syntax outside the subset (or is not a
 * valid pattern).
 *
 * @example
 * ```ts
 * parsePattern('^[a-z]+$'); // { kind: 'seq', items: [assert ^, repeat chars, assert $] }
 * parsePattern('(a)\\1'); // undefined: a backreference
 * ```
 */
export function parsePattern(source: string): PatternNode | undefined {
  try {
    const parser = new Parser(source);
    const node = parser.disjunction();
    return parser.atEnd() ? node : undefined; // an unmatched `)`
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

class Parser {
  private at = 0;

  constructor(private readonly source: string) {}

  atEnd(): boolean {
    return this.at >= this.source.length;
  }

  disjunction(): PatternNode {
    const options = [this.alternative()];
    while (this.peek() === '|') {
      this.at++;
      options.push(this.alternative());
    }
    return options.length === 1 ? options[0]! : { kind: 'alt', options };
  }

  private alternative(): PatternNode {
    const items: PatternNode[] = [];
    while (!this.atEnd() && this.peek() !== '|' && this.peek() !== ')') items.push(this.term());
    return items.length === 1 ? items[0]! : { kind: 'seq', items };
  }

  private term(): PatternNode {
    const char = this.next();
    if (char === '^' || char === '$') return this.noQuantifier({ kind: 'assert', what: char });
    if (char === '\\' && (this.peek() === 'b' || this.peek() === 'B')) {
      return this.noQuantifier({ kind: 'assert', what: this.next() as 'b' | 'B' });
    }
    return this.quantified(this.atom(char));
  }

  private atom(char: string): PatternNode {
    switch (char) {
      case '(': {
        if (this.peek() === '?') {
          this.at++;
          const kind = this.next();
          // `(?<name>`; `(?<=` and `(?<!` are lookbehinds, `(?=`, `(?!`, `(?i:` and the rest are refused.
          if (kind === '<' && /^[A-Za-z_$][\w$]*>/.test(this.source.slice(this.at))) this.at = this.source.indexOf('>', this.at) + 1;
          else if (kind !== ':') throw new Unsupported();
        }
        const body = this.disjunction();
        if (this.next() !== ')') throw new Unsupported();
        return body;
      }
      case '[':
        return { kind: 'chars', set: this.characterClass() };
      case '.':
        return { kind: 'chars', set: DOT };
      case '\\':
        return { kind: 'chars', set: this.escape(false) };
      case '*':
      case '+':
      case '?':
      case '{':
      case ')':
      case '|':
        throw new Unsupported(); // nothing to repeat, or a literal `{` that reads like a broken quantifier
      default:
        return literal(char);
    }
  }

  private quantified(atom: PatternNode): PatternNode {
    let min: number;
    let max: number;
    const char = this.peek();
    if (char === '*') [min, max] = [0, Infinity];
    else if (char === '+') [min, max] = [1, Infinity];
    else if (char === '?') [min, max] = [0, 1];
    else if (char === '{') {
      const braces = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.at));
      if (braces === null) throw new Unsupported();
      min = Number(braces[1]);
      max = braces[2] === undefined ? min : braces[3] === '' ? Infinity : Number(braces[3]);
      if (min > MAX_COUNT || (max !== Infinity && max > MAX_COUNT) || min > max) throw new Unsupported();
      this.at += braces[0].length - 1;
    } else return atom;
    this.at++;
    const greedy = this.peek() !== '?';
    if (!greedy) this.at++;
    return this.noQuantifier({ kind: 'repeat', body: atom, min, max, greedy });
  }

  /** What may not be quantified (an assertion, a quantifier) is followed by no quantifier. */
  private noQuantifier(node: PatternNode): PatternNode {
    const char = this.peek();
    if (char === '*' || char === '+' || char === '?' || char === '{') throw new Unsupported();
    return node;
  }

  private characterClass(): CharSet {
    const negated = this.peek() === '^';
    if (negated) this.at++;
    const ranges: [number, number][] = [];
    while (this.peek() !== ']') {
      if (this.atEnd()) throw new Unsupported();
      const from = this.classAtom();
      if (this.peek() === '-' && this.source[this.at + 1] !== ']' && this.at + 1 < this.source.length) {
        this.at++;
        const to = this.classAtom();
        // A range needs a single character at both ends; `[\d-z]` reads `-` literally (Annex B): refused.
        if (!isSingle(from) || !isSingle(to) || from[0]![0] > to[0]![0]) throw new Unsupported();
        ranges.push([from[0]![0], to[0]![0]]);
      } else ranges.push(...from.map(([lo, hi]) => [lo, hi] as [number, number]));
    }
    this.at++;
    const set = normalize(ranges);
    return negated ? complement(set) : set;
  }

  private classAtom(): CharSet {
    const char = this.next();
    if (char !== '\\') return [[char.charCodeAt(0), char.charCodeAt(0)]];
    return this.escape(true);
  }

  /** The escape after a `\` (outside a class, `\b` and `\B` were taken as assertions already). */
  private escape(inClass: boolean): CharSet {
    if (this.atEnd()) throw new Unsupported();
    const char = this.next();
    const unit = (code: number): CharSet => [[code, code]];
    const classEscape = CLASS_ESCAPES[char];
    if (classEscape !== undefined) return classEscape;
    const control = CONTROL_ESCAPES[char];
    if (control !== undefined) return unit(control);
    if (inClass && char === 'b') return unit(0x08);
    if (inClass && char === '-') return unit(0x2d);
    if (char === '0') {
      if (/\d/.test(this.peek())) throw new Unsupported(); // a legacy octal escape
      return unit(0);
    }
    if (char === 'c') {
      const letter = this.next();
      if (!/^[A-Za-z]$/.test(letter)) throw new Unsupported();
      return unit(letter.charCodeAt(0) % 32);
    }
    if (char === 'x' || char === 'u') {
      const digits = char === 'x' ? 2 : 4;
      const hex = this.source.slice(this.at, this.at + digits);
      if (!new RegExp(`^[0-9A-Fa-f]{${digits}}$`).test(hex)) throw new Unsupported();
      this.at += digits;
      return unit(Number.parseInt(hex, 16));
    }
    // Backreferences (`\1`, `\k<name>`), `\p{…}` (which only means a property with the u flag) and
    // identity escapes of letters and digits are refused; any other character escapes to itself.
    if (/^[A-Za-z0-9]$/.test(char)) throw new Unsupported();
    return unit(char.charCodeAt(0));
  }

  private peek(): string {
    return this.source[this.at] ?? '';
  }

  private next(): string {
    if (this.atEnd()) throw new Unsupported();
    return this.source[this.at++]!;
  }
}

function literal(char: string): PatternNode {
  const code = char.charCodeAt(0);
  return { kind: 'chars', set: [[code, code]] };
}

function isSingle(set: CharSet): boolean {
  return set.length === 1 && set[0]![0] === set[0]![1];
}

/** Sorted, merged ranges. */
function normalize(ranges: readonly (readonly [number, number])[]): CharSet {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else merged.push([lo, hi]);
  }
  return merged;
}

/** Every code unit not in `set`. */
function complement(set: CharSet): CharSet {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of set) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_UNIT) out.push([next, MAX_UNIT]);
  return out;
}
