import { ConfigError } from '../../util/errors.js';
import { isRecord } from '../../util/validate.js';
import type { ResolvedLimit, ResolvedRateLimit, ScheduleFacts } from '../../types/schedule.js';
import { createLimiter, isLimiter } from './limiter.js';
import { checkRate, createRateLimiter, isRateLimiter } from './rateLimiter.js';

/**
 * Checks a tool definition's scheduling options and resolves them (a `{ max, key }` limit gets a
 * limiter of its own, a `{ max, perMs, key }` rate limit a rate limiter of its own; a resolved one,
 * `{ limiter, key }` from another tool spread in, is kept: the two tools share it).
 * @throws {ConfigError} naming `where` and the option
 */
export function scheduleFacts<Args>(where: ConfigError['where'], definition: { readonly limit?: unknown; readonly rateLimit?: unknown; readonly start?: unknown }): ScheduleFacts<Args> {
  const { start = 'eager' } = definition;
  if (start !== 'eager' && start !== 'after-response') throw new ConfigError(where, 'start', "'eager' or 'after-response'", start);
  return {
    limit: resolveLimit(where, definition.limit) as ResolvedLimit<Args> | undefined,
    rateLimit: resolveRateLimit(where, definition.rateLimit) as ResolvedRateLimit<Args> | undefined,
    start,
  };
}

function resolveLimit(where: ConfigError['where'], limit: unknown): ResolvedLimit<never> | undefined {
  if (limit === undefined) return undefined;
  if (isLimiter(limit)) return Object.freeze({ limiter: limit, key: undefined });
  const expected = 'a Limiter (createLimiter) or { max, key? }';
  if (!isRecord(limit)) throw new ConfigError(where, 'limit', expected, limit);
  if ('limiter' in limit) return resolved(where, 'limit', limit, isLimiter(limit.limiter), 'a Limiter (createLimiter)');
  const { max, key } = limit;
  if (!Number.isInteger(max) || (max as number) < 1) throw new ConfigError(where, 'limit.max', 'an integer of at least 1', max);
  if (key !== undefined && typeof key !== 'function') throw new ConfigError(where, 'limit.key', 'a function (args) => string', key);
  return Object.freeze({ limiter: createLimiter({ max: max as number }), key: key as ((args: never) => string) | undefined });
}

function resolveRateLimit(where: ConfigError['where'], rateLimit: unknown): ResolvedRateLimit<never> | undefined {
  if (rateLimit === undefined) return undefined;
  if (isRateLimiter(rateLimit)) return Object.freeze({ limiter: rateLimit, key: undefined });
  if (!isRecord(rateLimit)) throw new ConfigError(where, 'rateLimit', 'a RateLimiter (createRateLimiter) or { max, perMs, key? }', rateLimit);
  if ('limiter' in rateLimit) return resolved(where, 'rateLimit', rateLimit, isRateLimiter(rateLimit.limiter), 'a RateLimiter (createRateLimiter)');
  const rate = checkRate(where, 'rateLimit.', rateLimit);
  const { key } = rateLimit;
  if (key !== undefined && typeof key !== 'function') throw new ConfigError(where, 'rateLimit.key', 'a function (args) => string', key);
  return Object.freeze({ limiter: createRateLimiter(rate), key: key as ((args: never) => string) | undefined });
}

/** A tool's resolved `{ limiter, key }` (from a tool spread into a definition), checked and kept as it is. */
function resolved<L>(where: ConfigError['where'], option: 'limit' | 'rateLimit', given: Record<string, unknown>, isLimiterOfItsKind: boolean, expected: string): { readonly limiter: L; readonly key: ((args: never) => string) | undefined } {
  if (!isLimiterOfItsKind) throw new ConfigError(where, `${option}.limiter`, expected, given['limiter']);
  const { limiter, key } = given;
  if (key !== undefined && typeof key !== 'function') throw new ConfigError(where, `${option}.key`, 'a function (args) => string', key);
  return Object.freeze({ limiter: limiter as L, key: key as ((args: never) => string) | undefined });
}
