import { ConfigError } from '../errors.js';
import { Tokens } from '../internal/tokens.js';
import { isPositiveDuration, MAX_TIMER_MS } from '../internal/validate.js';

/**
 * A cap on how many tool bodies *start* per time window, shareable by several tools and pipelines (one
 * API quota). Give it to tools as `rateLimit: rateLimiter`; build one with {@link createRateLimiter}. A
 * tool's `rateLimit: { max, perMs, key? }` makes a rate limiter of its own.
 *
 * At most `max` bodies start in any window of `perMs` milliseconds (per key): each of `max` tokens is
 * spent when a body starts and returns `perMs` later. A call waiting for a token holds no pool slot;
 * waiting counts as its queue time (`timing.durations.queue`, and `limit`), never its timeout. Time is
 * the pipeline's `scheduler` clock: pipelines sharing a rate limiter should share their scheduler (the
 * default one, unless a test gives its own).
 *
 * @example
 * ```ts
 * const searchQuota = createRateLimiter({ max: 100, perMs: 60_000 }); // 100 calls a minute
 * const web = defineTool({ name: 'web_search', description: 'Search the web', input, mode: 'parallel', rateLimit: searchQuota, execute });
 * const news = defineTool({ name: 'news_search', description: 'Search the news', input, mode: 'parallel', rateLimit: searchQuota, execute });
 * searchQuota.available(); // starts either tool may make right now, in every pipeline
 * ```
 */
export interface RateLimiter {
  /** Body starts per window (per key). */
  readonly max: number;
  /** The window, in milliseconds. */
  readonly perMs: number;
  /** Starts of `key` (the only key, `''`, by default) that may happen now without waiting. */
  available(key?: string): number;
  /** Calls waiting for a token of `key` now. */
  waiting(key?: string): number;
}

/** The options of {@link createRateLimiter}. */
export interface RateLimiterOptions {
  /** Body starts per window: an integer of at least 1. */
  readonly max: number;
  /** The window in milliseconds: positive, at most 2³¹−1 (Node's longest timer). */
  readonly perMs: number;
}

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
