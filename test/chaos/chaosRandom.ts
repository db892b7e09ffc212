/**
 * The chaos suite's randomness: one seed per run (`CHAOS_SEED`, or drawn), and a stream of its own for
 * each part of the suite (the turns of a phase, its faults, the adversary), so the choices one part
 * makes do not depend on how often another drew — a failing seed replays the same turns, the same
 * fault sequence and the same answers, as far as timing lets it.
 */
import { mulberry32 } from '../../bench/common.js';

/** The run's seed: `CHAOS_SEED` when set, else a fresh one (printed with the counts). */
export function chaosSeed(): number {
  const given = process.env['CHAOS_SEED'];
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`CHAOS_SEED must be a non-negative integer, not ${JSON.stringify(given)}`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}

/** A seeded stream of choices. */
export class Random {
  readonly #next: () => number;

  /** The stream named `part` of the run seeded `seed`. */
  constructor(seed: number, part: string) {
    let mixed = seed >>> 0;
    for (const char of part) mixed = Math.imul(mixed ^ char.charCodeAt(0), 0x9e3779b1) >>> 0;
    this.#next = mulberry32(mixed);
  }

  /** In [0, 1). */
  float(): number {
    return this.#next();
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.#next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.#next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#next() * items.length)]!;
  }
}
