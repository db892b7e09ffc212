import { ConfigError } from '../../util/errors.js';
import { isRecord, MAX_TIMER_MS } from '../../util/validate.js';
import type { AttemptError, ResolvedRetry } from '../../types/retry.js';

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
