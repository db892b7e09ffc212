import { ConfigError } from '../../util/errors.js';
import { Permits } from './permits.js';
import { isCount } from '../../util/validate.js';
import type { Limiter, LimiterOptions } from '../../types/schedule.js';

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
