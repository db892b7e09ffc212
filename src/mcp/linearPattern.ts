import { parsePattern, type CharSet, type PatternNode } from './patternSyntax.js';

/** Patterns longer than this are not admitted: a search step may try every part of the pattern. */
export const MAX_PATTERN_LENGTH = 256;
/** The longest match an alternative without `^` may have: each start index then costs at most this many steps. */
export const MAX_UNANCHORED_SPAN = 16;

/**
 * Whether a JavaScript backtracking engine (V8's, through `new RegExp(pattern).test(s)` as zod
 * runs a JSON Schema `pattern`) provably tests a string in time linear in its length.
 *
 * The pattern must parse ({@link parsePattern}: no backreferences, no lookarounds), be at most
 * {@link MAX_PATTERN_LENGTH} long, and be **deterministic with unique routes**, checked on its
 * Glushkov positions (each character set of the pattern is a position) with route counts:
 * - from the start, and after each position, at most one route leads to any next position, and the
 *   character sets of the next positions are pairwise disjoint;
 * - at most one route leads through any part without consuming a character (no `(|)`, no `(a?)?`)
 *   and no quantifier other than `{1}` repeats a part that can match empty.
 *
 * Then at every step of a search, of all the routes the engine tries at most one consumes the next
 * character: every other route fails at its first character (or an assertion), so backtracking never
 * re-reads input, and one search attempt costs O(length · pattern²) at worst. Finally each top-level
 * alternative must start with `^` (only index 0 is tried: `^` fails at once elsewhere) or match at
 * most {@link MAX_UNANCHORED_SPAN} characters (each start index is then tried in bounded time).
 * `[a-z]+[0-9]`, unanchored, is refused: although deterministic, each start index re-reads the run
 * of letters, which is quadratic.
 *
 * @example
 * ```ts
 * isLinearPattern('^[a-z]+(-[a-z]+)*$'); // true
 * isLinearPattern('^([a-z]+)+$'); // false: two routes lead from one letter to the next
 * isLinearPattern('\\.json$'); // true: unanchored, but it matches at most 5 characters
 * ```
 */
export function isLinearPattern(pattern: string): boolean {
  return linearPatternCost(pattern) !== undefined;
}

/**
 * What testing a string against an admitted pattern costs per character of the string, in steps of
 * a search attempt: 1 for an anchored pattern (one attempt), plus each unanchored alternative's
 * longest match (one bounded attempt per start index). `undefined` when {@link isLinearPattern}
 * would say `false`.
 *
 * @example
 * ```ts
 * linearPatternCost('^[a-z]+$'); // 1
 * linearPatternCost('\\.json$'); // 6
 * ```
 */
export function linearPatternCost(pattern: string): number | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) return undefined;
  const root = parsePattern(pattern);
  if (root === undefined) return undefined;
  const glushkov = new Glushkov();
  const { first } = glushkov.analyze(root);
  if (!glushkov.sound || !glushkov.deterministic(first)) return undefined;
  for (const next of glushkov.follow.values()) if (!glushkov.deterministic(next)) return undefined;
  let cost = 1;
  for (const alternative of root.kind === 'alt' ? root.options : [root]) {
    if (anchored(alternative)) continue;
    const span = maxLength(alternative);
    if (span > MAX_UNANCHORED_SPAN) return undefined;
    cost += span;
  }
  return cost;
}

/** Route counts per position, saturating at 2 (two routes are already one too many). */
type Routes = Map<number, number>;

interface Analysis {
  /** How many routes lead through without consuming a character. */
  readonly empty: number;
  /** The positions that can match first, with the number of routes to each. */
  readonly first: Routes;
  /** The positions that can match last, with the number of routes from each to the end. */
  readonly last: Routes;
}

class Glushkov {
  readonly sets: CharSet[] = [];
  /** For each position, the positions that can match right after it. */
  readonly follow = new Map<number, Routes>();
  /** False once some part is passed by two empty routes, or repeats a part that can match empty. */
  sound = true;

  analyze(node: PatternNode): Analysis {
    const result = this.node(node);
    if (result.empty > 1 || saturated(result.first) || saturated(result.last)) this.sound = false;
    return result;
  }

  private node(node: PatternNode): Analysis {
    switch (node.kind) {
      case 'chars': {
        const position = this.sets.push(node.set) - 1;
        this.follow.set(position, new Map());
        return { empty: 0, first: new Map([[position, 1]]), last: new Map([[position, 1]]) };
      }
      case 'assert':
        return { empty: 1, first: new Map(), last: new Map() };
      case 'alt': {
        const parts = node.options.map((option) => this.analyze(option));
        return {
          empty: cap(parts.reduce((sum, part) => sum + part.empty, 0)),
          first: sum(parts.map((part) => part.first)),
          last: sum(parts.map((part) => part.last)),
        };
      }
      case 'seq': {
        let acc: Analysis = { empty: 1, first: new Map(), last: new Map() };
        for (const item of node.items) {
          const part = this.analyze(item);
          this.link(acc.last, part.first);
          acc = {
            empty: cap(acc.empty * part.empty),
            first: sum([acc.first, scale(part.first, acc.empty)]),
            last: sum([part.last, scale(acc.last, part.empty)]),
          };
          if (acc.empty > 1 || saturated(acc.first) || saturated(acc.last)) this.sound = false;
        }
        return acc;
      }
      case 'repeat': {
        const body = this.analyze(node.body);
        if (node.max === 0) return { empty: 1, first: new Map(), last: new Map() };
        // A body that can match empty under a repetition gives the engine two ways through it.
        if (body.empty > 0 && !(node.min === 1 && node.max === 1)) this.sound = false;
        if (node.max >= 2) this.link(body.last, body.first); // one more iteration
        return { empty: node.min === 0 ? 1 : body.empty, first: body.first, last: body.last };
      }
    }
  }

  /** Every position of `from` can be followed by every position of `to`, along as many routes as both give. */
  private link(from: Routes, to: Routes): void {
    for (const [position, routes] of from) {
      const next = this.follow.get(position)!;
      for (const [target, more] of to) next.set(target, cap((next.get(target) ?? 0) + routes * more));
    }
  }

  /** At most one route to each position, and no character two positions could both match. */
  deterministic(next: Routes): boolean {
    if (saturated(next)) return false;
    const ranges = [...next.keys()].flatMap((position) => this.sets[position]!).sort((a, b) => a[0] - b[0]);
    let reach = -1;
    for (const [lo, hi] of ranges) {
      if (lo <= reach) return false; // the ranges of one set never overlap, so these are two positions'
      reach = Math.max(reach, hi);
    }
    return true;
  }
}

function anchored(node: PatternNode): boolean {
  const first = node.kind === 'seq' ? node.items[0] : node;
  return first?.kind === 'assert' && first.what === '^';
}

/** The most characters `node` can match. */
function maxLength(node: PatternNode): number {
  switch (node.kind) {
    case 'chars':
      return 1;
    case 'assert':
      return 0;
    case 'alt':
      return Math.max(...node.options.map(maxLength));
    case 'seq':
      return node.items.reduce((total, item) => total + maxLength(item), 0);
    case 'repeat': {
      const body = maxLength(node.body);
      return body === 0 || node.max === 0 ? 0 : body * node.max;
    }
  }
}

const cap = (routes: number): number => Math.min(routes, 2);
const saturated = (routes: Routes): boolean => [...routes.values()].some((count) => count > 1);

function scale(routes: Routes, factor: number): Routes {
  return factor === 0 ? new Map() : new Map([...routes].map(([position, count]) => [position, cap(count * factor)]));
}

function sum(parts: readonly Routes[]): Routes {
  const out: Routes = new Map();
  for (const part of parts) for (const [position, count] of part) out.set(position, cap((out.get(position) ?? 0) + count));
  return out;
}
