// A tool's `retry` options and the failures they see. (A leaf: imports only from types/.)
import type { TimeoutError, ToolBodyError } from './toolError.js';

/**
 * The failure of one attempt, as `retryOn` sees it: the body threw, rejected or its stream errored
 * (`tool_error`, with what it threw as `cause`), or it ran past its time limit (`timeout`).
 */
export type AttemptError = ToolBodyError | TimeoutError;

/**
 * The delay before each further attempt: `initialMs` before the second, multiplied by `factor` for
 * each one after, at most `maxMs`; then up to `jitter` (a fraction, 0–1) of it is taken off at random,
 * so calls that failed together do not all come back at once.
 *
 * @example
 * ```ts
 * const backoff: RetryBackoff = { initialMs: 200, factor: 2, maxMs: 5_000, jitter: 0.2 };
 * // attempt 2 after 160–200 ms, attempt 3 after 320–400 ms, attempt 4 after 640–800 ms, …
 * ```
 */
export interface RetryBackoff {
  /** Milliseconds before the second attempt (0 or more). @default 200 */
  readonly initialMs?: number;
  /** The growth of the delay per attempt: 1 or more (1: a constant delay). @default 2 */
  readonly factor?: number;
  /** The longest delay, at least `initialMs`. @default 30_000 */
  readonly maxMs?: number;
  /** The fraction of each delay (0–1) taken off at random. @default 0 */
  readonly jitter?: number;
}

/**
 * A tool's `retry`: run a failed body again, up to `attempts` bodies in all, after a growing delay.
 * Allowed for `idempotent: true` tools, or for any tool with an explicit `retryOn` (you then say which
 * failures are safe to repeat). Each attempt has the tool's full timeout; a timeout is retried like a
 * throw (its body's signal is aborted first, and the next attempt starts only after it settled, at most
 * `abortGraceMs`). The call keeps its pool slot through the delays, and an exclusive call stays alone.
 * Cancelling the call (its turn's cancel-rest, the run's signal, unsubscribing) stops retrying at once.
 *
 * @example
 * ```ts
 * const fetchPage = defineTool({
 *   name: 'fetch_page',
 *   description: 'Fetch a URL',
 *   input: z.object({ url: z.url() }),
 *   mode: 'parallel',
 *   idempotent: true,
 *   retry: { attempts: 3, backoff: { initialMs: 250, factor: 2, maxMs: 2_000, jitter: 0.2 } },
 *   execute: async ({ url }, ctx) => (await fetch(url, { signal: ctx.signal })).text(),
 * });
 * ```
 */
export interface RetryOptions {
  /** Attempts in all, the first included: an integer from 1 (no retry) to 100. */
  readonly attempts: number;
  /** The delays between attempts. @default { initialMs: 200, factor: 2, maxMs: 30_000, jitter: 0 } */
  readonly backoff?: RetryBackoff;
  /**
   * Whether a failed attempt may be repeated; a throw counts as `false`.
   * @default every failure, for an idempotent tool (required for any other)
   */
  readonly retryOn?: (error: AttemptError) => boolean;
  /** The source of randomness for `jitter`, in [0, 1) (inject a fixed one in tests). @default Math.random */
  readonly random?: () => number;
}

/**
 * A tool's `retry` as a pipeline applies it (`tool.retry`): every field filled in.
 *
 * @example
 * ```ts
 * const tool = defineTool({ ...definition, idempotent: true, retry: { attempts: 3 } });
 * tool.retry?.attempts; // 3
 * ```
 */
export interface ResolvedRetry {
  readonly attempts: number;
  readonly initialMs: number;
  readonly factor: number;
  readonly maxMs: number;
  readonly jitter: number;
  /** Which failed attempts may run again; undefined: every one (the tool is idempotent). */
  readonly retryOn: ((error: AttemptError) => boolean) | undefined;
  /** The source of the jitter, a number in [0, 1) (`Math.random` unless a test gave another). */
  readonly random: () => number;
}
