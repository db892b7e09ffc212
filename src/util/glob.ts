import { describeValue } from './describe.js';
import { ConfigError } from './errors.js';

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
 * Who gave a {@link GlobSet} its patterns: the public function the user called and its option
 * (`{ where: 'denyTools', option: 'patterns' }`), so that a bad pattern is a `ConfigError` naming them.
 */
export interface GlobSource {
  readonly where: ConfigError['where'];
  readonly option: string;
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
 * @throws {TypeError} when `pattern` is not a non-empty string: internal misuse, as every public
 *   caller goes through {@link GlobSet}, which checks its patterns first and names the caller.
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
 * @throws {ConfigError} when `patterns` is not an array, or one is not a non-empty string; the error
 *   names `source`: the function the user called and the option (`denyTools`, `patterns[1]`).
 *
 * @example
 * ```ts
 * const writes = new GlobSet(['write_*', 'bash'], { where: 'denyTools', option: 'patterns' });
 * writes.firstMatch('write_file'); // 'write_*'
 * writes.matches('read_file'); // false
 * new GlobSet(['bash'], { where: 'denyTools', option: 'patterns' }, { ignoreCase: true }).matches('Bash'); // true
 * ```
 */
export class GlobSet {
  /** The patterns as given, frozen. */
  readonly patterns: readonly string[];
  readonly #compiled: readonly RegExp[];

  constructor(patterns: readonly string[], { where, option }: GlobSource, options: GlobOptions = {}) {
    // A string is iterable: spreading 'x*' would make the patterns 'x' and '*'.
    if (!Array.isArray(patterns)) throw new ConfigError(where, option, 'an array of globs', patterns);
    this.patterns = Object.freeze([...patterns]);
    this.patterns.forEach((pattern, i) => {
      if (typeof pattern !== 'string' || pattern === '') throw new ConfigError(where, `${option}[${i}]`, 'a non-empty glob string', pattern);
    });
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
