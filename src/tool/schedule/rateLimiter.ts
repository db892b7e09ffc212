import { ConfigError } from '../../util/errors.js';
import { Tokens } from './tokens.js';
import { isPositiveDuration, MAX_TIMER_MS } from '../../util/validate.js';
import type { RateLimiter, RateLimiterOptions } from '../../types/schedule.js';

/** The tokens behind each rate limiter, out of reach of its users. */
const tokensOf = new WeakMap<RateLimiter, Tokens>();

/**
 * Creates a {@link RateLimiter}: at most `max` bodies of the tools that share it start in any window
 * of `perMs` milliseconds.
 *
 * @throws {ConfigError} when `max` is not an integer of at least 1 or `perMs` not a timer length.
 *
 * @example
 * ```ts
 * import { createRateLimiter, defineTool } from 'toolstream';
 *
 * const searchQuota = createRateLimiter({ max: 100, perMs: 60_000 });
 * const search = defineTool({ ...definition, rateLimit: searchQuota });
 * ```
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { max, perMs } = checkRate('createRateLimiter', '', options);
  const tokens = new Tokens(max, perMs);
  const limiter: RateLimiter = Object.freeze({
    max,
    perMs,
    available: (key = '') => tokens.available(key),
    waiting: (key = '') => tokens.waiting(key),
  });
  tokensOf.set(limiter, tokens);
  return limiter;
}

/**
 * Checks `max` and `perMs` of rate options (`prefix` names them, e.g. `rateLimit.`).
 * @throws {ConfigError}
 */
export function checkRate(where: ConfigError['where'], prefix: string, options: unknown): RateLimiterOptions {
  const { max, perMs } = (options ?? {}) as Partial<RateLimiterOptions>;
  if (!Number.isInteger(max) || max! < 1) throw new ConfigError(where, `${prefix}max`, 'an integer of at least 1', max);
  if (!isPositiveDuration(perMs)) throw new ConfigError(where, `${prefix}perMs`, `1 to ${MAX_TIMER_MS} milliseconds`, perMs);
  return { max: max!, perMs };
}

/** Whether `value` is a rate limiter made by {@link createRateLimiter}. */
export function isRateLimiter(value: unknown): value is RateLimiter {
  return typeof value === 'object' && value !== null && tokensOf.has(value as RateLimiter);
}

/** The tokens behind a rate limiter (internal: the pool takes and spends them). */
export function rateLimiterTokens(limiter: RateLimiter): Tokens {
  return tokensOf.get(limiter)!;
}
