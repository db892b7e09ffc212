import { ConfigError } from '../errors.js';
import { Permits } from '../internal/permits.js';
import { isCount } from '../internal/validate.js';

/**
 * A cap on how many tool bodies run at once, shareable by several tools and pipelines (one browser
 * pool, one database connection budget). Give it to tools as `limit: limiter`; build one with
 * {@link createLimiter}. A tool's `limit: { max, key? }` makes a limiter of its own.
 *
 * A body holds one of the limiter's `max` permits from its start until its slot is free again (it
 * settled, or was abandoned `abortGraceMs` after an abort), so limited bodies never overlap beyond
 * `max` — across every turn of every pipeline that uses it. A call waiting for a permit holds no pool
 * slot; waiting counts as its queue time (`timing.durations.queue`), never its timeout.
 *
 * @example
 * ```ts
 * const browsers = createLimiter({ max: 2 });
 * const screenshot = defineTool({ name: 'screenshot', description: 'Screenshot a page', input, mode: 'parallel', limit: browsers, execute });
 * const scrape = defineTool({ name: 'scrape', description: 'Scrape a page', input, mode: 'parallel', limit: browsers, execute });
 * browsers.active(); // bodies of either tool running now, in every pipeline: at most 2
 * ```
 */
export interface Limiter {
  /** Permits per key: at most this many bodies at once. */
  readonly max: number;
  /** Bodies holding a permit of `key` now (the limiter's only key, `''`, by default). */
  active(key?: string): number;
  /** Calls waiting for a permit of `key` now. */
  waiting(key?: string): number;
}

/** The options of {@link createLimiter}. */
export interface LimiterOptions {
  /** Bodies at once: an integer of at least 1. */
  readonly max: number;
}

/** The permits behind each limiter, out of reach of its users. */
const permitsOf = new WeakMap<Limiter, Permits>();

/**
 * Creates a {@link Limiter}: at most `max` bodies of the tools that share it run at once.
 *
 * @throws {ConfigError} when `max` is not an integer of at least 1.
 *
 * @example
 * ```ts
 * import { createLimiter, defineTool } from 'toolstream';
 *
 * const browsers = createLimiter({ max: 2 });
 * const screenshot = defineTool({ ...definition, limit: browsers });
 * ```
 */
export function createLimiter(options: LimiterOptions): Limiter {
  const max = (options as Partial<LimiterOptions> | undefined)?.max;
  if (!isCount(max, 1) || max === Infinity) throw new ConfigError('createLimiter', 'max', 'an integer of at least 1', max);
  const permits = new Permits(max);
  const limiter: Limiter = Object.freeze({
    max,
    active: (key = '') => permits.active(key),
    waiting: (key = '') => permits.waiting(key),
  });
  permitsOf.set(limiter, permits);
  return limiter;
}

/** Whether `value` is a limiter made by {@link createLimiter}. */
export function isLimiter(value: unknown): value is Limiter {
  return typeof value === 'object' && value !== null && permitsOf.has(value as Limiter);
}

/** The permits behind a limiter (internal: the pool takes and returns them). */
export function limiterPermits(limiter: Limiter): Permits {
  return permitsOf.get(limiter)!;
}
