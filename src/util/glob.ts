import { describeValue } from './describe.js';

/** Regex syntax characters that a glob treats literally; `*` and `?` are the glob's own wildcards. */
const REGEX_SYNTAX = /[.+^${}()|[\]\\]/g;

/** How a glob compares letters. */
export interface GlobOptions {
  /**
   * Match letters regardless of case (Unicode simple case folding: `Delete_*` matches `delete_repo`
   * and `DELETE_REPO`). Right for rules that tighten (deny, ask), where a case variant must not slip
   * through; wrong for rules that loosen (allow, exempt), where it would admit names nobody wrote.
   * @default false
   */
  readonly ignoreCase?: boolean;
}

/**
 * Compile a tool-name glob to an anchored `RegExp`, case-sensitive unless `options.ignoreCase`.
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
 * compileGlob('delete_*', { ignoreCase: true }).test('Delete_Repo'); // true
 * ```
 */
export function compileGlob(pattern: string, options: GlobOptions = {}): RegExp {
  if (typeof pattern !== 'string' || pattern === '') {
    throw new TypeError(`compileGlob: pattern must be a non-empty string; received ${describeValue(pattern)}`);
  }
  const flags = options.ignoreCase === true ? 'isu' : 'su';
  const [first = '', ...rest] = pattern.split(/\*+/).map(segmentToRegex);
  const last = rest.pop();
  if (last === undefined) return new RegExp(`^${first}$`, flags);
  // Group i+1 captures up to the end of the first occurrence of segment i; `\i+1` then consumes it atomically.
  // A backreference is always followed by `(?=` or `.*`, never a digit, so `\1` cannot read as `\10`.
  // With `i`, the backreference compares case-insensitively too, but it re-reads the very text its
  // group captured, so it still consumes exactly that occurrence.
  const middle = rest.map((segment, i) => `(?=(.*?${segment}))\\${i + 1}`).join('');
  return new RegExp(`^${first}${middle}.*${last}$`, flags);
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
 * new GlobSet(['bash'], { ignoreCase: true }).matches('Bash'); // true
 * ```
 */
export class GlobSet {
  /** The patterns as given, frozen. */
  readonly patterns: readonly string[];
  readonly #compiled: readonly RegExp[];

  constructor(patterns: readonly string[], options: GlobOptions = {}) {
    // A string is iterable: spreading 'x*' would make the patterns 'x' and '*'.
    if (!Array.isArray(patterns)) throw new TypeError(`GlobSet: patterns must be an array of globs; received ${describeValue(patterns)}`);
    this.patterns = Object.freeze([...patterns]);
    this.#compiled = this.patterns.map((pattern) => compileGlob(pattern, options));
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
