import { describeValue } from './describe.js';

/** Regex syntax characters that a glob treats literally; `*` and `?` are the glob's own wildcards. */
const REGEX_SYNTAX = /[.+^${}()|[\]\\]/g;

/**
 * Compile a tool-name glob to an anchored, case-sensitive `RegExp`.
 *
 * `*` matches any run of characters (none included, `_` and `.` included), `?` exactly one character
 * (one code point, so an emoji counts as one); every other character is literal. The whole name must match.
 *
 * Tool names come from the model, so matching must not blow up on a hostile name: a naive translation of
 * `*a*a*a*b` backtracks polynomially against a long run of `a`. Each middle segment is instead matched at
 * its first occurrence inside a lookahead, which JavaScript never backtracks into; taking the first
 * occurrence is always safe because segments have a fixed length and the next `*` absorbs any gap.
 *
 * @throws {TypeError} when `pattern` is not a non-empty string.
 *
 * @example
 * ```ts
 * compileGlob('mcp__github__*').test('mcp__github__create_issue'); // true
 * compileGlob('read_*').test('xread_file'); // false: anchored
 * compileGlob('bash?').test('bash2'); // true
 * ```
 */
export function compileGlob(pattern: string): RegExp {
  if (typeof pattern !== 'string' || pattern === '') {
    throw new TypeError(`compileGlob: pattern must be a non-empty string; received ${describeValue(pattern)}`);
  }
  const [first = '', ...rest] = pattern.split(/\*+/).map(segmentToRegex);
  const last = rest.pop();
  if (last === undefined) return new RegExp(`^${first}$`, 'su');
  // Group i+1 captures up to the end of the first occurrence of segment i; `\i+1` then consumes it atomically.
  // A backreference is always followed by `(?=` or `.*`, never a digit, so `\1` cannot read as `\10`.
  const middle = rest.map((segment, i) => `(?=(.*?${segment}))\\${i + 1}`).join('');
  return new RegExp(`^${first}${middle}.*${last}$`, 'su');
}

function segmentToRegex(segment: string): string {
  return segment.replace(REGEX_SYNTAX, '\\$&').replaceAll('?', '.');
}

/**
 * An ordered list of globs compiled once, answering which of them (if any) a tool name matches.
 *
 * @throws {TypeError} from {@link compileGlob} when a pattern is not a non-empty string.
 *
 * @example
 * ```ts
 * const writes = new GlobSet(['write_*', 'bash']);
 * writes.firstMatch('write_file'); // 'write_*'
 * writes.matches('read_file'); // false
 * ```
 */
export class GlobSet {
  /** The patterns as given, frozen. */
  readonly patterns: readonly string[];
  readonly #compiled: readonly RegExp[];

  constructor(patterns: readonly string[]) {
    // A string is iterable: spreading 'x*' would make the patterns 'x' and '*'.
    if (!Array.isArray(patterns)) throw new TypeError(`GlobSet: patterns must be an array of globs; received ${describeValue(patterns)}`);
    this.patterns = Object.freeze([...patterns]);
    this.#compiled = this.patterns.map(compileGlob);
  }

  /** The first pattern, in list order, that matches `name`; `undefined` when none does. */
  firstMatch(name: string): string | undefined {
    const index = this.#compiled.findIndex((glob) => glob.test(name));
    return index === -1 ? undefined : this.patterns[index];
  }

  /** Whether any pattern matches `name`. */
  matches(name: string): boolean {
    return this.#compiled.some((glob) => glob.test(name));
  }
}
