import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.js';
import { retainText, TextRetainer, type RetainedText, type TextBudget } from '../../src/util/textRetainer.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

const cut = (text: string, omittedChars: number, omittedLines: number): RetainedText => ({
  text,
  omittedChars,
  omittedLines,
  truncated: true,
});
const unchanged = (text: string): RetainedText => ({ text, omittedChars: 0, omittedLines: 0, truncated: false });

describe('retainText: examples', () => {
  it('returns text within budget unchanged', () => {
    expect(retainText('abc\ndef\n', { maxChars: 8, maxLines: 2 })).toEqual(unchanged('abc\ndef\n'));
    expect(retainText('abc', { maxChars: 3, maxLines: 1, keep: 'head+tail' })).toEqual(unchanged('abc'));
  });

  it('returns empty text unchanged', () => {
    expect(retainText('', { maxChars: 1, maxLines: 1 })).toEqual(unchanged(''));
  });

  it('with no limits keeps everything', () => {
    const text = 'x\n'.repeat(10_000);
    expect(retainText(text, {})).toEqual(unchanged(text));
  });

  it('does not count a trailing newline as an extra line, but counts an empty line', () => {
    expect(retainText('a\nb\n', { maxLines: 2 })).toEqual(unchanged('a\nb\n'));
    expect(retainText('a\nb\n\n', { maxLines: 2 })).toEqual(cut('a\nb\n[... 1 line omitted]', 1, 1));
    expect(retainText('\n', { maxLines: 1 })).toEqual(unchanged('\n'));
  });

  it('lines only, head: keeps the first lines and notes the whole lines dropped', () => {
    expect(retainText('1\n2\n3\n4\n5\n', { maxLines: 2 })).toEqual(cut('1\n2\n[... 3 lines omitted]', 6, 3));
    expect(retainText('1\n2\n3', { maxLines: 2 })).toEqual(cut('1\n2\n[... 1 line omitted]', 1, 1));
  });

  it('lines only, head+tail: splits the budget evenly, the head getting the odd line', () => {
    expect(retainText('1\n2\n3\n4\n5\n', { maxLines: 2, keep: 'head+tail' })).toEqual(
      cut('1\n[... 3 lines omitted]\n5\n', 6, 3),
    );
    expect(retainText('1\n2\n3\n4\n5', { maxLines: 3, keep: 'head+tail' })).toEqual(
      cut('1\n2\n[... 2 lines omitted]\n5', 4, 2),
    );
    expect(retainText('1\n2\n3\n', { maxLines: 1, keep: 'head+tail' })).toEqual(
      cut('1\n[... 2 lines omitted]', 4, 2),
    );
  });

  it('characters only, head: cuts inside the line and puts the note on its own line', () => {
    expect(retainText('abcdefghij', { maxChars: 4 })).toEqual(cut('abcd\n[... 6 characters omitted]', 6, 0));
    expect(retainText('abcdefghij', { maxChars: 9 })).toEqual(cut('abcdefghi\n[... 1 character omitted]', 1, 0));
  });

  it('characters only, head+tail: splits the budget evenly, the head getting the odd character', () => {
    expect(retainText('abcdefghij', { maxChars: 5, keep: 'head+tail' })).toEqual(
      cut('abc\n[... 5 characters omitted]\nij', 5, 0),
    );
  });

  it('a character cut across lines counts the whole lines it dropped too', () => {
    expect(retainText('aaa\nbbb\nccc', { maxChars: 5 })).toEqual(cut('aaa\nb\n[... 1 line, 6 characters omitted]', 6, 1));
  });

  it('a character cut that lands on line boundaries reads as a line cut', () => {
    expect(retainText('aaa\nbbb\nccc\n', { maxChars: 4 })).toEqual(cut('aaa\n[... 2 lines omitted]', 8, 2));
  });

  it('both budgets: lines first, then characters on what remains', () => {
    expect(retainText('aaaa\nbbbb\ncccc\ndddd\n', { maxLines: 2, maxChars: 7 })).toEqual(
      cut('aaaa\nbb\n[... 2 lines, 13 characters omitted]', 13, 2),
    );
  });

  it('both budgets, head+tail: a short head lends its unused characters to the tail', () => {
    // Lines keep 'a\n' and 'eeeeeeeeee\n'; 7 characters split 4 + 3, but the head has only 2, so the tail gets 5.
    const text = 'a\nbbbbbbbbbb\nc\nd\neeeeeeeeee\n';
    expect(retainText(text, { maxLines: 2, maxChars: 7, keep: 'head+tail' })).toEqual(
      cut('a\n[... 3 lines, 21 characters omitted]\neeee\n', 21, 3),
    );
  });

  it('never splits a surrogate pair at the head cut: keeps one unit less', () => {
    expect(retainText('ab😀cd', { maxChars: 3 })).toEqual(cut('ab\n[... 4 characters omitted]', 4, 0));
    expect(retainText('😀', { maxChars: 1 })).toEqual(cut('[... 1 line omitted]', 2, 1));
  });

  it('never splits a surrogate pair at the tail cut: keeps one unit less', () => {
    expect(retainText('xab😀', { maxChars: 3, keep: 'head+tail' })).toEqual(
      cut('xa\n[... 3 characters omitted]', 3, 0),
    );
    expect(retainText('ab😀cd', { maxChars: 4, keep: 'head+tail' })).toEqual(
      cut('ab\n[... 2 characters omitted]\ncd', 2, 0),
    );
  });

  it('TextRetainer applies the same rules with a budget validated once, defaults filled in', () => {
    const retainer = new TextRetainer({ maxLines: 1 });
    expect(retainer.budget).toEqual({ maxChars: Infinity, maxLines: 1, keep: 'head' });
    expect(retainer.retain('a\nb\nc\n')).toEqual(retainText('a\nb\nc\n', { maxLines: 1 }));
    expect(retainer.retain('a\nb\nc\n').text).toBe('a\n[... 2 lines omitted]');
  });

  it.each([
    [{ maxChars: 0 }, 'maxChars', 'a positive integer or Infinity; received 0'],
    [{ maxChars: -3 }, 'maxChars', 'a positive integer or Infinity; received -3'],
    [{ maxChars: 2.5 }, 'maxChars', 'a positive integer or Infinity; received 2.5'],
    [{ maxLines: Number.NaN }, 'maxLines', 'a positive integer or Infinity; received NaN'],
    [{ maxLines: '10' }, 'maxLines', 'a positive integer or Infinity; received "10"'],
    [{ keep: 'tail' }, 'keep', '"head" or "head+tail"; received "tail"'],
    [null, 'budget', 'an object; received null'],
  ])('rejects the budget %o with a ConfigError naming the field', (budget, option, message) => {
    for (const [where, build] of [
      ['retainText', () => retainText('x', budget as TextBudget)],
      ['TextRetainer', () => new TextRetainer(budget as TextBudget)],
    ] as const) {
      expect(build).toThrow(TypeError); // a ConfigError is a TypeError still
      expect(build).toThrow(ConfigError);
      expect(build).toThrow(expect.objectContaining({ code: 'invalid_config', where, option }));
      expect(build).toThrow(`${where}: \`${option}\` must be ${message}`);
    }
  });

  it('accepts Infinity as a limit', () => {
    expect(retainText('a\nb', { maxChars: Infinity, maxLines: Infinity })).toEqual(unchanged('a\nb'));
  });

  it('rejects a text that is not a string with a plain TypeError: a value, not configuration', () => {
    expect(() => retainText(42 as unknown as string, {})).toThrow(
      new TypeError('retainText: text must be a string; received 42'),
    );
  });
});

/** Each line of `text` as [start, end), its newline included; a trailing newline starts no line. */
function lineRanges(text: string): [number, number][] {
  return [...text.matchAll(/[^\n]*\n|[^\n]+$/g)].map((m) => [m.index, m.index + m[0].length]);
}

function loneSurrogates(text: string): number {
  return (text.match(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g) ?? []).length;
}

function splitsPair(text: string, i: number): boolean {
  return /[\uD800-\uDBFF]/.test(text.charAt(i - 1)) && /[\uDC00-\uDFFF]/.test(text.charAt(i));
}

const plural = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? '' : 's'}`;
const atLineStart = (text: string, i: number): boolean => i === 0 || i === text.length || text[i - 1] === '\n';

/**
 * Splits a truncated output into the kept head and tail of `original`, checking the note format on
 * the way (its wording, its own line, its separators). Throws when no reading fits.
 */
function decompose(original: string, r: RetainedText): { head: string; tail: string } {
  const { omittedLines: L, omittedChars: C } = r;
  const notes = [`[... ${plural(L, 'line')} omitted]`, `[... ${plural(C, 'character')} omitted]`];
  notes.push(`[... ${plural(L, 'line')}, ${plural(C, 'character')} omitted]`);
  for (const note of notes) {
    for (let i = r.text.indexOf(note); i !== -1; i = r.text.indexOf(note, i + 1)) {
      const before = r.text.slice(0, i);
      const after = r.text.slice(i + note.length);
      const heads = before.endsWith('\n') ? [before, before.slice(0, -1)] : before === '' ? [''] : [];
      const tail = after === '' ? '' : after.startsWith('\n') ? after.slice(1) : undefined;
      for (const head of heads) {
        if (tail === undefined || head.length + tail.length + C !== original.length) continue;
        if (!original.startsWith(head) || !original.endsWith(tail)) continue;
        const start = head.length;
        const end = original.length - tail.length;
        if ((before === head) !== atLineStart(original, start)) continue; // newline added iff mid-line
        if ((after === '') !== (tail === '')) continue;
        const aligned = atLineStart(original, start) && atLineStart(original, end);
        const expected = aligned ? notes[0] : L === 0 ? notes[1] : notes[2];
        if (note === expected) return { head, tail };
      }
    }
  }
  throw new Error(`no reading of ${JSON.stringify(r.text)} fits ${JSON.stringify(original)}`);
}

const unit = fc.oneof(
  { weight: 3, arbitrary: fc.constant('\n') },
  { weight: 4, arbitrary: fc.constantFrom('a', 'b', '[', ']', '.', ' ') },
  { weight: 2, arbitrary: fc.constantFrom('😀', '𝄞', '\u{10FFFF}') },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) }, // lone surrogates too
);
// Medium sizes and mostly finite limits, so that about two runs in three cut something.
const texts = fc.oneof(
  fc.string({ unit, maxLength: 80, size: 'medium' }),
  fc.string({ unit: 'grapheme', maxLength: 40, size: 'medium' }),
);
const limit = (max: number): fc.Arbitrary<number> =>
  fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max }) }, { weight: 1, arbitrary: fc.constant(Infinity) });
const budgets: fc.Arbitrary<TextBudget> = fc.record(
  {
    maxChars: limit(24),
    maxLines: limit(6),
    keep: fc.constantFrom('head' as const, 'head+tail' as const),
  },
  { requiredKeys: [] },
);

describe('retainText: properties', () => {
  it('counts are exact, head and tail are a prefix and suffix, kept text is within budget, pairs stay whole', () => {
    fc.assert(
      fc.property(texts, budgets, (original, budget) => {
        const r = retainText(original, budget);
        const maxChars = budget.maxChars ?? Infinity;
        const maxLines = budget.maxLines ?? Infinity;
        const lines = lineRanges(original);
        const withinBudget = original.length <= maxChars && lines.length <= maxLines;
        expect(r.truncated).toBe(!withinBudget);
        if (!r.truncated) {
          expect(r).toEqual({ text: original, omittedChars: 0, omittedLines: 0, truncated: false });
          return;
        }
        const { head, tail } = decompose(original, r);
        if (budget.keep !== 'head+tail') expect(tail).toBe('');
        const start = head.length;
        const end = original.length - tail.length;
        expect(start).toBeLessThan(end);
        expect(original.length).toBe(head.length + tail.length + r.omittedChars);
        // Lines wholly inside the omitted range, and lines of the original that show at least in part.
        expect(r.omittedLines).toBe(lines.filter(([s, e]) => s >= start && e <= end).length);
        const shown = lines.filter(([s, e]) => s < start || e > end).length;
        expect(head.length + tail.length).toBeLessThanOrEqual(maxChars);
        expect(shown).toBeLessThanOrEqual(maxLines);
        // The budget is used, not just respected: lines exactly, characters up to a surrogate pair's unit per cut.
        if (maxChars === Infinity) expect(shown).toBe(maxLines);
        if (maxLines === Infinity) expect(head.length + tail.length).toBeGreaterThanOrEqual(maxChars - 2);
        expect(splitsPair(original, start) || splitsPair(original, end)).toBe(false);
        expect(loneSurrogates(r.text)).toBeLessThanOrEqual(loneSurrogates(original));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('TextRetainer agrees with retainText', () => {
    fc.assert(
      fc.property(texts, budgets, (text, budget) => {
        expect(new TextRetainer(budget).retain(text)).toEqual(retainText(text, budget));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
