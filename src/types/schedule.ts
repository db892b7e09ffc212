// What a tool declares about when its bodies may start: limits, rate limits, start. (A leaf: imports only from types/.)

/**
 * When a tool's calls may start (`ToolDefinition.start`): `'eager'` as soon as the pool admits them,
 * while the model's response may still be streaming; `'after-response'` only once the call source
 * completed cleanly (the response ended) — and never if it errored.
 *
 * @example
 * ```ts
 * const write = defineTool({ ...definition, mode: 'exclusive', start: 'after-response' });
 * const start: ToolStart = write.start; // 'after-response'
 * ```
 */
export type ToolStart = 'eager' | 'after-response';

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

/**
 * A tool's `limit`: at most `max` of its bodies at once — or, with `key`, at most `max` per value of
 * `key(args)` (one per repository, two per host) — across every turn of every pipeline that runs the
 * tool. Pass a shared {@link Limiter} instead to cap several tools together.
 *
 * @typeParam Args - the tool's parsed arguments.
 *
 * @example
 * ```ts
 * const clone = defineTool({
 *   name: 'git_clone',
 *   description: 'Clone a repository',
 *   input: z.object({ url: z.url() }),
 *   mode: 'parallel',
 *   limit: { max: 1, key: ({ url }) => new URL(url).host }, // one clone per host at a time
 *   execute,
 * });
 * ```
 */
export interface LimitOptions<Args = unknown> {
  /** Bodies at once (per key): an integer of at least 1. */
  readonly max: number;
  /**
   * The key a call is limited under, from its parsed arguments; calls of different keys do not wait
   * for each other. A throw or a non-string fails the call (`tool_error`) without running it.
   * @default one key for every call of the tool
   */
  readonly key?: (args: Args) => string;
}

/**
 * A tool's limit as a pipeline applies it (`tool.limit`): the limiter the bodies take permits of, and
 * the key function (undefined: every call under the key `''`).
 *
 * @example
 * ```ts
 * const tool = defineTool({ ...definition, limit: { max: 2 } });
 * tool.limit?.limiter.active(); // bodies of the tool running now
 * ```
 */
export interface ResolvedLimit<Args = unknown> {
  /** The limiter whose permits the tool's bodies take (the tool's own, or one shared). */
  readonly limiter: Limiter;
  /** The permit's key for a call's arguments; undefined: one key for every call. */
  readonly key: ((args: Args) => string) | undefined;
}

/**
 * A cap on how many tool bodies *start* per time window, shareable by several tools and pipelines (one
 * API quota). Give it to tools as `rateLimit: rateLimiter`; build one with {@link createRateLimiter}. A
 * tool's `rateLimit: { max, perMs, key? }` makes a rate limiter of its own.
 *
 * At most `max` bodies start in any window of `perMs` milliseconds (per key): each of `max` tokens is
 * spent when a body starts and returns `perMs` later. A call waiting for a token holds no pool slot;
 * waiting counts as its queue time (`timing.durations.queue`, and `limit`), never its timeout. Time is
 * the pipeline's `scheduler` clock, and the tokens are kept per scheduler: every pipeline on the
 * default scheduler (real time) shares one quota, a pipeline on a test's `TestScheduler` has one of
 * its own (a token spent on one clock cannot be timed on another). `available` and `waiting` tell
 * about the scheduler that used the limiter last.
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

/**
 * A tool's `rateLimit`: at most `max` of its bodies start in any window of `perMs` milliseconds — or,
 * with `key`, at most `max` per value of `key(args)` (per account, per host) — across every turn of
 * every pipeline that runs the tool on the same scheduler: all real-time pipelines (the default
 * scheduler) share one quota, and each test's `TestScheduler` has one of its own. Pass a shared
 * {@link RateLimiter} instead to share one quota among several tools.
 *
 * @typeParam Args - the tool's parsed arguments.
 *
 * @example
 * ```ts
 * const search = defineTool({
 *   name: 'web_search',
 *   description: 'Search the web',
 *   input: z.object({ query: z.string() }),
 *   mode: 'parallel',
 *   rateLimit: { max: 100, perMs: 60_000 }, // the API allows 100 calls a minute
 *   execute,
 * });
 * ```
 */
export interface RateLimitOptions<Args = unknown> {
  /** Body starts per window (per key): an integer of at least 1. */
  readonly max: number;
  /** The window in milliseconds: positive, at most 2³¹−1. */
  readonly perMs: number;
  /**
   * The key a call is rate-limited under, from its parsed arguments; keys have separate quotas. A
   * throw or a non-string fails the call (`tool_error`) without running it.
   * @default one key for every call of the tool
   */
  readonly key?: (args: Args) => string;
}

/**
 * A tool's rate limit as a pipeline applies it (`tool.rateLimit`): the rate limiter whose tokens the
 * bodies spend, and the key function (undefined: every call under the key `''`).
 *
 * @example
 * ```ts
 * const tool = defineTool({ ...definition, rateLimit: { max: 10, perMs: 1000 } });
 * tool.rateLimit?.limiter.available(); // starts the tool may make right now
 * ```
 */
export interface ResolvedRateLimit<Args = unknown> {
  /** The rate limiter whose tokens the tool's bodies spend (the tool's own, or one shared). */
  readonly limiter: RateLimiter;
  /** The quota's key for a call's arguments; undefined: one quota for every call. */
  readonly key: ((args: Args) => string) | undefined;
}

/**
 * What a tool declares about its scheduling, as `defineTool` resolves it onto the tool.
 *
 * @example
 * ```ts
 * const tool = defineTool({ ...definition, limit: { max: 2 }, rateLimit: { max: 10, perMs: 1000 } });
 * const facts: ScheduleFacts = tool; // tool.limit, tool.rateLimit: { limiter, key }
 * ```
 */
export interface ScheduleFacts<Args = unknown> {
  /** The tool's limit (see `ToolDefinition.limit`); undefined for none. */
  readonly limit: ResolvedLimit<Args> | undefined;
  /** The tool's rate limit (see `ToolDefinition.rateLimit`); undefined for none. */
  readonly rateLimit: ResolvedRateLimit<Args> | undefined;
  /** When the tool's calls may start (see `ToolDefinition.start`). */
  readonly start: ToolStart;
}
