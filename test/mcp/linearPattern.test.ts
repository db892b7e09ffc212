import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLinearPattern, MAX_UNANCHORED_SPAN } from '../../src/mcp/linearPattern.js';
import { parsePattern, type CharSet, type PatternNode } from '../../src/mcp/patternSyntax.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

/**
 * A backtracking matcher with JavaScript's semantics (greedy and lazy quantifiers, the empty-iteration
 * check, a search from every start index), instrumented to count the steps it takes: the cost model of
 * V8's engine, which explores the same routes in the same order.
 */
function countSteps(root: PatternNode, input: string, budget = 1e6): { matched: boolean; steps: number } {
  let steps = 0;
  const step = () => {
    if (++steps > budget) throw new OverBudget();
  };
  const isWord = (i: number) => i >= 0 && i < input.length && /\w/.test(input[i]!);
  const inSet = (set: CharSet, code: number) => set.some(([lo, hi]) => lo <= code && code <= hi);
  const match = (node: PatternNode, i: number, k: (j: number) => boolean): boolean => {
    step();
    switch (node.kind) {
      case 'chars':
        return i < input.length && inSet(node.set, input.charCodeAt(i)) && k(i + 1);
      case 'assert': {
        const holds =
          node.what === '^' ? i === 0
          : node.what === '$' ? i === input.length
          : (isWord(i - 1) !== isWord(i)) === (node.what === 'b');
        return holds && k(i);
      }
      case 'seq': {
        const from = (index: number, j: number): boolean =>
          index === node.items.length ? k(j) : match(node.items[index]!, j, (next) => from(index + 1, next));
        return from(0, i);
      }
      case 'alt':
        return node.options.some((option) => match(option, i, k));
      case 'repeat': {
        const { body, min, max, greedy } = node;
        const repeat = (count: number, j: number): boolean => {
          step();
          const more = () => count < max && match(body, j, (next) => (next === j && count >= min ? false : repeat(count + 1, next)));
          const stop = () => count >= min && k(j);
          return greedy ? more() || stop() : stop() || more();
        };
        return repeat(0, i);
      }
    }
  };
  for (let start = 0; start <= input.length; start++) if (match(root, start, () => true)) return { matched: true, steps };
  return { matched: false, steps };
}

class OverBudget extends Error {}

/** The step count, or `Infinity` past the budget. */
function stepsOrInfinity(root: PatternNode, input: string): number {
  try {
    return countSteps(root, input).steps;
  } catch (error) {
    if (error instanceof OverBudget) return Infinity;
    throw error;
  }
}

// Random patterns over a small alphabet, so that classes overlap, alternatives collide and loops nest.
const { pattern: patternArb } = fc.letrec<{ pattern: string; term: string; atom: string }>((tie) => ({
  pattern: fc.oneof(
    { depthSize: 'small' },
    tie('term'),
    fc.array(tie('term'), { minLength: 2, maxLength: 4 }).map((terms) => terms.join('')),
    fc.array(tie('term'), { minLength: 2, maxLength: 3 }).map((terms) => terms.join('|')),
  ),
  // Quantifiers weigh most: nested loops are where backtracking blows up.
  term: fc.oneof(
    { arbitrary: tie('atom'), weight: 2 },
    {
      arbitrary: fc.tuple(tie('atom'), fc.constantFrom('*', '+', '?', '{2}', '{1,3}', '{0,2}', '*?', '+?')).map(([a, q]) => a + q),
      weight: 4,
    },
    { arbitrary: fc.constantFrom('^', '$', '\\b'), weight: 1 },
  ),
  atom: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'b', 'c', '.', '[ab]', '[^a]', '\\d', '\\w', '-'),
    tie('pattern').map((p) => `(${p})`),
    tie('pattern').map((p) => `(?:${p})`),
  ),
}));
// Anchors at both ends, often: a `$` is what makes a backtracking engine try every route before failing.
const anchoredPattern = fc
  .tuple(fc.boolean(), patternArb, fc.boolean())
  .map(([caret, p, dollar]) => `${caret ? '^' : ''}(?:${p})${dollar ? '$' : ''}`);
const chunk = fc.array(fc.constantFrom('a', 'b', 'c', '1', '-', ' '), { minLength: 1, maxLength: 3 }).map((c) => c.join(''));
const edge = fc.array(fc.constantFrom('a', 'b', 'c', '1', '!'), { maxLength: 3 }).map((c) => c.join(''));
const failingEdge = fc.oneof(edge, fc.constant('!'));

/**
 * An input built from the pattern itself to make it backtrack: every choice fixed by `seed`, one
 * unbounded loop (chosen by `seed`) pumped `n` more times with one string its body matches, then a
 * suffix that may fail the rest. Only one loop grows, so the input grows linearly with `n`.
 */
function pumpedInput(root: PatternNode, seed: number, n: number, suffix: string): string {
  let state = seed >>> 0 || 1;
  const random = () => ((state = (state * 1103515245 + 12345) >>> 0) >>> 8) / (1 << 24);
  const choices = new Map<PatternNode, number>();
  const choose = (node: PatternNode, options: number) => {
    if (!choices.has(node)) choices.set(node, Math.floor(random() * options));
    return choices.get(node)!;
  };
  const preferred = [...'ab1- c_!'].map((c) => c.charCodeAt(0));
  let loops = 0;
  const pumped = Math.floor(random() * 4); // the index, in visiting order, of the loop that grows
  const sample = (node: PatternNode): string => {
    switch (node.kind) {
      case 'chars': {
        const inSet = preferred.filter((code) => node.set.some(([lo, hi]) => lo <= code && code <= hi));
        return inSet.length > 0 ? String.fromCharCode(inSet[choose(node, inSet.length)]!) : String.fromCharCode(node.set[0]?.[0] ?? 0x21);
      }
      case 'assert':
        return '';
      case 'seq':
        return node.items.map(sample).join('');
      case 'alt':
        return sample(node.options[choose(node, node.options.length)]!);
      case 'repeat': {
        const grows = node.max === Infinity && loops++ === pumped;
        const extra = grows ? n : choose(node, Math.min(node.max, node.min + 2) - node.min + 1);
        return sample(node.body).repeat(node.min + extra);
      }
    }
  };
  return sample(root) + suffix;
}

function compiles(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

describe('isLinearPattern', () => {
  it.each([
    ['^[a-z]+$', true],
    ['^[a-z]+(-[a-z]+)*$', true],
    ['^[0-9]{3}-[0-9]{4}$', true],
    ['^\\d+(\\.\\d+)?$', true],
    ['^https?://[^/]+(/.*)?$', true],
    ['^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', false], // after `@`, a `.` could be the dot or part of the domain
    ['^[A-Za-z0-9_.:-]{1,128}$', true],
    ['\\.json$', true], // unanchored, at most 6 characters
    ['^$', true],
    ['', true],
    ['^(a|)(b|)c$', true],
    ['^(?<word>[a-z]+)$', true],
    ['^([a-z]+)+$', false], // the pattern: two routes lead from one letter to the next
    ['^(a+)+$', false],
    ['(a|a)*', false],
    ['^(a|ab)*$', false],
    ['^((ab)+)+$', false],
    ['^(|)(|)$', false],
    ['^(a?)?$', false],
    ['^(\\w+\\s?)*$', false],
    ['[a-z]+[0-9]', false], // deterministic, but each start index re-reads the letters: quadratic
    ['(a)\\1', false], // backreference
    ['^(?=a)a', false], // lookahead
    ['^\\p{L}+$', false],
    ['^a{0,3}a$', false],
    ['^(?:a|ab)c$', false], // two positions could match the first character (a constant factor, but not deterministic)
    [`^${'a'.repeat(300)}$`, false], // too long
    [`[ab]{${MAX_UNANCHORED_SPAN}}`, true],
    [`[ab]{${MAX_UNANCHORED_SPAN + 1}}`, false],
  ])('%s → %s', (source, admitted) => {
    expect(isLinearPattern(source)).toBe(admitted);
  });

  it('property: the matcher reads patterns as JavaScript does (so the step counts below are the engine’s)', () => {
    fc.assert(
      fc.property(anchoredPattern, fc.array(chunk, { maxLength: 6 }), (source, parts) => {
        const input = parts.join('');
        const node = parsePattern(source);
        fc.pre(node !== undefined && compiles(source));
        let matched: boolean;
        try {
          matched = countSteps(node!, input).matched;
        } catch (error) {
          if (error instanceof OverBudget) return; // a refused, exponential pattern: nothing to compare in time
          throw error;
        }
        expect(matched).toBe(new RegExp(source).test(input));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('property: every admitted pattern is tested in linear time, even on inputs built to make it backtrack', () => {
    let admitted = 0;
    fc.assert(
      fc.property(anchoredPattern, fc.integer(), edge, chunk, failingEdge, (source, seed, prefix, pumped, suffix) => {
        fc.pre(compiles(source) && isLinearPattern(source));
        admitted++;
        const node = parsePattern(source)!;
        const inputs = [
          (n: number) => pumpedInput(node, seed, n, suffix), // built from the pattern's own loops
          (n: number) => prefix + pumped.repeat(n) + suffix, // and from random pieces
        ];
        for (const input of inputs) {
          const steps = [8, 16, 32].map((n) => stepsOrInfinity(node, input(n)));
          // Linear: doubling the input at most doubles the growth (quadratic would quadruple it, exponential explode).
          const [small, medium, large] = steps as [number, number, number];
          expect(large - medium).toBeLessThanOrEqual(2.5 * (medium - small) + 64);
        }
      }),
      { numRuns: NUM_RUNS },
    );
    expect(admitted).toBeGreaterThan(NUM_RUNS / 10); // the property was not vacuous
  });

  it('the growth check catches what the analysis refuses', () => {
    // The same measurement on refused patterns: it sees them blow up, so the property above has teeth.
    for (const [source, pumped, suffix] of [
      ['^(a|a)*$', 'a', '!'],
      ['^(a+)+$', 'a', '!'],
      ['[a-z]+[0-9]', 'a', ''],
      ['^(\\w+\\s?)*$', 'a', '!'],
    ] as const) {
      const node = parsePattern(source)!;
      const [small, medium, large] = [4, 8, 16].map((n) => stepsOrInfinity(node, pumped.repeat(n) + suffix)) as [number, number, number];
      expect(large - medium, source).toBeGreaterThan(2.5 * (medium - small) + 64);
    }
  });
});
