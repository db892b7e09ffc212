import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.js';
import { compileGlob, GlobSet } from '../../src/util/glob.js';
import { stretched } from '../support/timing.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

/** The glob semantics, spelled out over code points with memoised recursion: the oracle for compileGlob. */
function referenceMatch(pattern: string, name: string): boolean {
  const p = [...pattern];
  const s = [...name];
  const memo = new Map<number, boolean>();
  const match = (i: number, j: number): boolean => {
    const key = i * (s.length + 1) + j;
    let result = memo.get(key);
    if (result !== undefined) return result;
    if (i === p.length) result = j === s.length;
    else if (p[i] === '*') result = match(i + 1, j) || (j < s.length && match(i, j + 1));
    else result = j < s.length && (p[i] === '?' || p[i] === s[j]) && match(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return match(0, 0);
}

// Regex metacharacters, digits (next to backreferences), separators and an astral character.
const literalChar = fc.constantFrom('a', 'b', '_', '.', '-', ':', '$', '(', ')', '[', '\\', '^', '|', '+', '1', '0', 'é', '😀');
const name = fc.array(literalChar, { maxLength: 12 }).map((chars) => chars.join(''));

describe('compileGlob', () => {
  it.each([
    ['mcp__github__*', 'mcp__github__create_issue', true],
    ['mcp__github__*', 'mcp__github__', true],
    ['mcp__github__*', 'mcp__gitlab__create_issue', false],
    ['read_*', 'read_file', true],
    ['read_*', 'xread_file', false],
    ['*_file', 'read_file.bak', false],
    ['*', 'anything.at_all', true],
    ['*', '', true],
    ['bash?', 'bash2', true],
    ['bash?', 'bash', false],
    ['bash?', 'bash22', false],
    ['?', '😀', true],
    ['a.b', 'axb', false],
    ['a.b', 'a.b', true],
    ['(x|y)+', '(x|y)+', true],
    ['(x|y)+', 'xy', false],
    ['Read_*', 'read_file', false],
    ['*a*b*1', 'xaybz1', true],
    ['*a*b*1', 'xbyaz1', false],
  ])('%s against %s → %s', (pattern, tool, expected) => {
    expect(compileGlob(pattern).test(tool)).toBe(expected);
  });

  it.each([[''], [42], [undefined], [['read_*']]])('rejects %j with a TypeError naming it', (pattern) => {
    expect(() => compileGlob(pattern as never)).toThrow(TypeError);
    expect(() => compileGlob(pattern as never)).toThrow(/^compileGlob: pattern must be a non-empty string; received /);
  });

  it('names the rejected value', () => {
    expect(() => compileGlob(42 as never)).toThrow('compileGlob: pattern must be a non-empty string; received 42');
    expect(() => compileGlob('')).toThrow('received ""');
  });

  it('stays linear on a name built to make a naive translation backtrack, with ignoreCase too', () => {
    const started = performance.now();
    expect(compileGlob('*a*a*a*a*a*a*a*a*b').test('a'.repeat(20_000))).toBe(false);
    expect(compileGlob('*a*a*a*a*a*a*a*a*b', { ignoreCase: true }).test('A'.repeat(20_000))).toBe(false);
    // Generous: the naive translation takes minutes here; this fails only if the construction is lost.
    expect(performance.now() - started).toBeLessThan(stretched(1_000));
  });

  it('property: literal pieces of a name, in order, joined by * match the name', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ char: literalChar, kept: fc.boolean() }), { maxLength: 16 }),
        fc.boolean(),
        fc.boolean(),
        (chars, leadingStar, trailingStar) => {
          const tool = chars.map((c) => c.char).join('');
          // A dropped run of characters becomes one `*`; kept runs stay as literal substrings.
          const pattern = chars.map((c) => (c.kept ? c.char : '*')).join('').replace(/\*+/g, '*');
          const glob = `${leadingStar ? '*' : ''}${pattern}${trailingStar ? '*' : ''}` || '*';
          expect(compileGlob(glob).test(tool)).toBe(true);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('property: a pattern without wildcards matches only itself', () => {
    fc.assert(
      fc.property(name.filter((n) => n !== ''), name, (literal, other) => {
        const glob = compileGlob(literal);
        expect(glob.test(literal)).toBe(true);
        expect(glob.test(other)).toBe(other === literal);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('property: agrees with a reference matcher on random patterns and names; with ignoreCase, on both lower-cased', () => {
    const small = fc.constantFrom('a', 'A', 'b', 'B', '.', '1');
    const smallName = fc.array(small, { maxLength: 10 }).map((c) => c.join(''));
    const pattern = fc
      .array(fc.oneof(small, fc.constantFrom('*', '?')), { minLength: 1, maxLength: 8 })
      .map((c) => c.join(''));
    fc.assert(
      fc.property(pattern, smallName, (glob, tool) => {
        expect(compileGlob(glob).test(tool)).toBe(referenceMatch(glob, tool));
        expect(compileGlob(glob, { ignoreCase: true }).test(tool)).toBe(referenceMatch(glob.toLowerCase(), tool.toLowerCase()));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

/** A caller to name in the GlobSets built here. */
const SOURCE = { where: 'denyTools', option: 'patterns' } as const;

describe('compileGlob with ignoreCase', () => {
  it.each([
    ['mcp__gh__delete_*', 'mcp__gh__Delete_Repo', true],
    ['mcp__gh__delete_*', 'MCP__GH__DELETE_REPO', true],
    ['Read_*', 'read_file', true],
    ['*a*B*1', 'xAybz1', true],
    ['*a*b*1', 'xbyaz1', false],
    ['bash?', 'BASH2', true],
  ])('%s against %s → %s', (pattern, tool, expected) => {
    expect(compileGlob(pattern, { ignoreCase: true }).test(tool)).toBe(expected);
    expect(new GlobSet([pattern], SOURCE, { ignoreCase: true }).matches(tool)).toBe(expected);
  });
});

describe('GlobSet', () => {
  it('reports the first matching pattern in list order', () => {
    const set = new GlobSet(['write_*', '*_file', 'bash'], SOURCE);
    expect(set.firstMatch('write_file')).toBe('write_*');
    expect(set.firstMatch('read_file')).toBe('*_file');
    expect(set.firstMatch('grep')).toBeUndefined();
    expect(set.matches('bash')).toBe(true);
    expect(set.matches('bash2')).toBe(false);
  });

  it('copies and freezes its patterns', () => {
    const patterns = ['a*'];
    const set = new GlobSet(patterns, SOURCE);
    patterns.push('b*');
    expect(set.patterns).toEqual(['a*']);
    expect(Object.isFrozen(set.patterns)).toBe(true);
  });

  it('matches nothing when empty', () => {
    expect(new GlobSet([], SOURCE).matches('anything')).toBe(false);
  });

  it('rejects a bad pattern with a ConfigError naming its caller, option and index', () => {
    const bad = () => new GlobSet(['ok', 7 as never], SOURCE);
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(TypeError); // a ConfigError is a TypeError still
    expect(bad).toThrow(expect.objectContaining({ code: 'invalid_config', where: 'denyTools', option: 'patterns[1]' }));
    expect(bad).toThrow('denyTools: `patterns[1]` must be a non-empty glob string; received 7');
    expect(() => new GlobSet(['a', ''], { where: 'pathSandbox', option: 'tools' })).toThrow('pathSandbox: `tools[1]` must be a non-empty glob string; received ""');
  });

  it('rejects patterns that are not an array, a string included (spread, it would be one glob per character)', () => {
    const bad = () => new GlobSet('x*' as never, { where: 'allowTools', option: 'patterns' });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow('allowTools: `patterns` must be an array of globs; received "x*"');
  });
});
