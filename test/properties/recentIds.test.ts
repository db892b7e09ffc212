import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecentIds } from '../../src/util/recentIds.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

/**
 * The duplicate-id window against the simplest model of what it promises: the log of every id it
 * accepted, in order. Small capacities and a small id pool, so ids recur both inside the window, in
 * its uncertain band (N+1 to 2N ids back) and beyond it, and the generations turn many times a run.
 */
describe('RecentIds: the duplicate-id window', () => {
  it('refuses every id among the last N accepted, never one it was not given, forgets past 2N, and holds at most 2N', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.nat({ max: 40 }), { maxLength: 300 }), (capacity, picks) => {
        const window = new RecentIds(capacity);
        const accepted: string[] = [];
        for (const pick of picks) {
          const id = `c${pick}`;
          // How many accepted ids back `id` last was: 1 for the newest; Infinity if never accepted.
          const last = accepted.lastIndexOf(id);
          const back = last < 0 ? Infinity : accepted.length - last;
          const added = window.add(id);
          if (back <= capacity) expect(added, `${id} is ${back} back, window ${capacity}`).toBe(false);
          if (back === Infinity) expect(added, `${id} was never accepted`).toBe(true);
          if (back > 2 * capacity) expect(added, `${id} is ${back} back, past 2 × ${capacity}`).toBe(true);
          if (added) accepted.push(id);
          expect(window.size).toBeLessThanOrEqual(2 * capacity);
          expect(window.size).toBeGreaterThanOrEqual(Math.min(accepted.length, capacity));
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('generations turn on accepted ids only: a refused repeat does not renew its id', () => {
    const window = new RecentIds(2);
    // Capacity 2: [a b] [c, a refused, d] [e]: the last a is past both generations. Renewed by its
    // refused repeat, it would have been in [c a], the previous one, and refused.
    expect(['a', 'b', 'c', 'a', 'd', 'e', 'a'].map((id) => window.add(id))).toEqual([true, true, true, false, true, true, true]);
  });

  it('refuses a capacity that is not a positive integer', () => {
    for (const capacity of [0, -1, 1.5, Number.NaN]) expect(() => new RecentIds(capacity)).toThrow(RangeError);
  });
});
