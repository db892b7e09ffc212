import type { SchedulerLike } from 'rxjs';
import { ConfigError } from '../../util/errors.js';
import { Tokens } from './tokens.js';
import { isPositiveDuration, MAX_TIMER_MS } from '../../util/validate.js';
import type { RateLimiter, RateLimiterOptions } from '../../types/schedule.js';

/**
 * What a rate limiter keeps, out of reach of its users: one set of tokens per scheduler. A token spent
 * on one clock returns at a time of that clock only, so tokens are never shared across clocks: every
 * pipeline on the default `asyncScheduler` (real time) shares one set, and each virtual-time scheduler
 * (a test's `TestScheduler`) has its own, made when it first uses the limiter.
 */
interface Buckets {
  readonly max: number;
  readonly perMs: number;
  /** The generation of {@link resetRateLimits} these tokens belong to: older ones are dropped on use. */
  generation: number;
  perScheduler: WeakMap<SchedulerLike, Tokens>;
  /** The tokens used last, for `available` and `waiting` asked outside a pipeline. */
  last: Tokens | undefined;
}

const bucketsOf = new WeakMap<RateLimiter, Buckets>();
/** Bumped by {@link resetRateLimits}: every limiter starts afresh at its next use. */
let generation = 0;

/**
 * Creates a {@link RateLimiter}: at most `max` bodies of the tools that share it start in any window
 * of `perMs` milliseconds.
 *
 * Like a tool's inline `rateLimit`, it keeps one bucket of tokens per scheduler: all pipelines on the
 * default scheduler (real time) share one quota, and a pipeline on a virtual-time scheduler of its own
 * (a test's `TestScheduler`) has one of its own. A token's return is a time on the clock it was spent
 * on, meaningless on another clock, so sharing a bucket across clocks could only be wrong (a second
 * test's calls waiting for times of the first test's clock). `available()` and `waiting()` tell about
 * the bucket used last.
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
  const buckets: Buckets = { max, perMs, generation, perScheduler: new WeakMap(), last: undefined };
  const limiter: RateLimiter = Object.freeze({
    max,
    perMs,
    available: (key = '') => current(buckets)?.available(key) ?? max,
    waiting: (key = '') => current(buckets)?.waiting(key) ?? 0,
  });
  bucketsOf.set(limiter, buckets);
  return limiter;
}

/**
 * Forgets every token spent so far, of every rate limiter (a tool's inline `rateLimit` and every
 * {@link RateLimiter}): the next call of each starts with all `max` tokens free, on any scheduler.
 * For tests in one process that must not see each other's starts — two real-time tests over one
 * module-level tool, or marble tests that leave the default scheduler in place (inside
 * `TestScheduler.run` the default `asyncScheduler` follows virtual time, but it is one scheduler for
 * every test; a pipeline given `scheduler: testScheduler` needs no reset). Calls waiting for, or
 * holding, a token when it is called finish on the old tokens; never call it while a quota matters.
 *
 * @example
 * ```ts
 * import { resetRateLimits } from 'toolstream';
 * import { beforeEach } from 'vitest';
 *
 * beforeEach(() => resetRateLimits()); // each test starts with every quota unspent
 * ```
 */
export function resetRateLimits(): void {
  generation++;
}

/** The limiter's buckets of the current generation: those of an earlier one are dropped. */
function fresh(buckets: Buckets): Buckets {
  if (buckets.generation !== generation) {
    buckets.generation = generation;
    buckets.perScheduler = new WeakMap();
    buckets.last = undefined;
  }
  return buckets;
}

/** The tokens used last, unless a reset came since. */
function current(buckets: Buckets): Tokens | undefined {
  return fresh(buckets).last;
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
  return typeof value === 'object' && value !== null && bucketsOf.has(value as RateLimiter);
}

/** The tokens of a rate limiter on `scheduler` (internal: the pool takes and spends them). */
export function rateLimiterTokens(limiter: RateLimiter, scheduler: SchedulerLike): Tokens {
  const buckets = fresh(bucketsOf.get(limiter)!);
  let tokens = buckets.perScheduler.get(scheduler);
  if (tokens === undefined) {
    tokens = new Tokens(buckets.max, buckets.perMs);
    buckets.perScheduler.set(scheduler, tokens);
  }
  buckets.last = tokens;
  return tokens;
}
