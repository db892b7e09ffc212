import type { Limiter } from './limiter.js';
import type { RateLimiter } from './rateLimiter.js';

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
  readonly limiter: Limiter;
  readonly key: ((args: Args) => string) | undefined;
}

/**
 * A tool's `rateLimit`: at most `max` of its bodies start in any window of `perMs` milliseconds — or,
 * with `key`, at most `max` per value of `key(args)` (per account, per host) — across every turn of
 * every pipeline that runs the tool. Pass a shared {@link RateLimiter} instead to share one quota
 * among several tools.
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
  readonly limiter: RateLimiter;
  readonly key: ((args: Args) => string) | undefined;
}
