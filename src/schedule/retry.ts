import { ConfigError } from '../errors.js';
import { isRecord, MAX_TIMER_MS } from '../internal/validate.js';
import type { TimeoutError, ToolBodyError } from '../toolError.js';

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
  readonly retryOn: ((error: AttemptError) => boolean) | undefined;
  readonly random: () => number;
}

const MAX_ATTEMPTS = 100;

/**
 * Checks a tool definition's `retry` against its `idempotent` and resolves its defaults.
 * @throws {ConfigError} naming `where` and the option
 */
export function resolveRetry(where: ConfigError['where'], retry: unknown, idempotent: boolean): ResolvedRetry | undefined {
  if (retry === undefined) return undefined;
  if (resolved.has(retry as ResolvedRetry)) return retry as ResolvedRetry; // a contract's, given to implementTool
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError(where, option, expected, received);
  };
  if (!isRecord(retry)) fail('retry', '{ attempts, backoff?, retryOn? }', retry);
  const { attempts, backoff = {}, retryOn, random = Math.random } = retry as Record<string, unknown>;
  if (!Number.isInteger(attempts) || (attempts as number) < 1 || (attempts as number) > MAX_ATTEMPTS) {
    fail('retry.attempts', `an integer from 1 to ${MAX_ATTEMPTS}`, attempts);
  }
  if (retryOn !== undefined && typeof retryOn !== 'function') fail('retry.retryOn', 'a function (error) => boolean', retryOn);
  if (!idempotent && retryOn === undefined) {
    fail('retry', 'used only with `idempotent: true`, or with an explicit `retry.retryOn` saying which failures are safe to repeat', retry);
  }
  if (typeof random !== 'function') fail('retry.random', 'a function () => number in [0, 1)', random);
  if (!isRecord(backoff)) fail('retry.backoff', '{ initialMs?, factor?, maxMs?, jitter? }', backoff);
  const { initialMs = 200, factor = 2, maxMs = Math.max(30_000, initialMs as number), jitter = 0 } = backoff as Record<string, unknown>;
  const isDelay = (value: unknown): value is number => typeof value === 'number' && value >= 0 && value <= MAX_TIMER_MS;
  if (!isDelay(initialMs)) fail('retry.backoff.initialMs', `0 to ${MAX_TIMER_MS} milliseconds`, initialMs);
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) fail('retry.backoff.factor', 'a finite number of at least 1', factor);
  if (!isDelay(maxMs) || maxMs < (initialMs as number)) fail('retry.backoff.maxMs', `initialMs to ${MAX_TIMER_MS} milliseconds`, maxMs);
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter <= 1)) fail('retry.backoff.jitter', 'a fraction from 0 to 1', jitter);
  const result: ResolvedRetry = Object.freeze({
    attempts: attempts as number,
    initialMs: initialMs as number,
    factor: factor as number,
    maxMs: maxMs as number,
    jitter: jitter as number,
    retryOn: retryOn as ResolvedRetry['retryOn'],
    random: random as () => number,
  });
  resolved.add(result);
  return result;
}

const resolved = new WeakSet<ResolvedRetry>();

/** The delay before attempt `failed + 1`, after attempt `failed` (1 for the first) failed. */
export function retryDelay(retry: ResolvedRetry, failed: number): number {
  const full = Math.min(retry.maxMs, retry.initialMs * retry.factor ** (failed - 1));
  if (retry.jitter === 0) return full;
  const drawn = Math.min(Math.max(Number(retry.random()) || 0, 0), 1);
  return full - full * retry.jitter * drawn;
}

/** Whether the failure of attempt `failed` may be repeated: attempts remain and `retryOn` agrees (a throw: no). */
export function mayRetry(retry: ResolvedRetry, failed: number, error: AttemptError): boolean {
  if (failed >= retry.attempts) return false;
  if (retry.retryOn === undefined) return true;
  try {
    return retry.retryOn(error) === true;
  } catch {
    return false;
  }
}
