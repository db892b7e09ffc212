import { ConfigError } from '../errors.js';
import { isRecord } from '../internal/validate.js';
import { createLimiter, isLimiter } from './limiter.js';
import type { ResolvedLimit } from './types.js';

/**
 * What a tool declares about its scheduling, as `defineTool` resolves it onto the tool.
 *
 * @example
 * ```ts
 * const tool = defineTool({ ...definition, limit: { max: 2 } });
 * const facts: ScheduleFacts = tool; // tool.limit: { limiter, key }
 * ```
 */
export interface ScheduleFacts<Args = unknown> {
  /** The tool's limit (see `ToolDefinition.limit`); undefined for none. */
  readonly limit: ResolvedLimit<Args> | undefined;
}

/**
 * Checks a tool definition's scheduling options and resolves them (a `{ max, key }` limit gets a
 * limiter of its own).
 * @throws {ConfigError} naming `where` and the option
 */
export function scheduleFacts<Args>(where: ConfigError['where'], definition: { readonly limit?: unknown }): ScheduleFacts<Args> {
  return { limit: resolveLimit(where, definition.limit) as ResolvedLimit<Args> | undefined };
}

function resolveLimit(where: ConfigError['where'], limit: unknown): ResolvedLimit<never> | undefined {
  if (limit === undefined) return undefined;
  if (isLimiter(limit)) return Object.freeze({ limiter: limit, key: undefined });
  const expected = 'a Limiter (createLimiter) or { max, key? }';
  if (!isRecord(limit)) throw new ConfigError(where, 'limit', expected, limit);
  const { max, key } = limit;
  if (!Number.isInteger(max) || (max as number) < 1) throw new ConfigError(where, 'limit.max', 'an integer of at least 1', max);
  if (key !== undefined && typeof key !== 'function') throw new ConfigError(where, 'limit.key', 'a function (args) => string', key);
  return Object.freeze({ limiter: createLimiter({ max: max as number }), key: key as ((args: never) => string) | undefined });
}
