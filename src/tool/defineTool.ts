import type { $ZodType } from 'zod/v4/core';
import { ConfigError } from '../util/errors.js';
import { isPositiveDuration, MAX_TIMER_MS } from '../util/validate.js';
import { resolveRetry } from './schedule/retry.js';
import { scheduleFacts } from './schedule/scheduleFacts.js';
import type { ResolvedRetry, RetryOptions } from '../types/retry.js';
import type { ScheduleFacts } from '../types/schedule.js';
import type { OnError, Tool, ToolChains, ToolDefinition, ToolFacts } from '../types/tool.js';

const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Define a tool: validates the definition eagerly and returns it frozen, with defaults filled in.
 *
 * @throws {ConfigError} when a field is missing or malformed; the message names it.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import { defineTool } from 'toolstream';
 *
 * export const readFile = defineTool({
 *   name: 'read_file',
 *   description: 'Read a UTF-8 text file',
 *   input: z.object({ path: z.string() }),
 *   mode: 'parallel',
 *   timeoutMs: 5_000,
 *   execute: ({ path }, { signal }) => fs.readFile(path, { encoding: 'utf8', signal }),
 * });
 * ```
 */
export function defineTool<Input extends $ZodType, Output>(
  definition: ToolDefinition<Input, Output>,
): Tool<Input, Output> {
  const facts = toolFacts('defineTool', definition);
  const { execute, render } = definition;
  if (typeof execute !== 'function') throw new ConfigError('defineTool', 'execute', 'a function', execute);
  if (render !== undefined && typeof render !== 'function') throw new ConfigError('defineTool', 'render', 'a function (value) => string', render);
  const chains = toolChains(definition.chains);
  return Object.freeze({ ...facts, ...scheduleFacts('defineTool', definition), execute, render, chains });
}

/**
 * Checks a tool's own middleware and freezes copies of its lists (changing the arrays given changes
 * nothing); `undefined` when it has none, so a tool without middleware costs its calls nothing.
 * @throws {ConfigError} naming the list or the entry that is not a function
 */
function toolChains<Args>(chains: ToolChains<Args> | undefined): ToolChains<Args> | undefined {
  if (chains === undefined) return undefined;
  if (typeof chains !== 'object' || chains === null) throw new ConfigError('defineTool', 'chains', 'an object { execute?, result? }', chains);
  const execute = middlewareList('chains.execute', chains.execute, 'an execute middleware (ctx, next) => output');
  const result = middlewareList('chains.result', chains.result, 'a result middleware (draft, next) => void');
  if (execute === undefined && result === undefined) return undefined;
  return Object.freeze({ ...(execute === undefined ? {} : { execute }), ...(result === undefined ? {} : { result }) });
}

function middlewareList<F>(option: string, list: readonly F[] | undefined, expected: string): readonly F[] | undefined {
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) throw new ConfigError('defineTool', option, `an array of middleware: ${expected}`, list);
  list.forEach((entry: unknown, i) => {
    if (typeof entry !== 'function') throw new ConfigError('defineTool', `${option}[${i}]`, expected, entry);
  });
  return list.length === 0 ? undefined : Object.freeze([...list]);
}

/**
 * The facts a tool or a contract is defined with, as `defineTool` and `toolContract` check them. The
 * optional ones also take `undefined` (and `retry` a resolved one), as a contract holds them:
 * `toolContract({ ...contract, timeoutMs })`.
 *
 * @example
 * ```ts
 * const facts: FactsDefinition<typeof input> = { name: 'get_weather', description: 'The weather in a city', input, timeoutMs: undefined };
 * ```
 */
export type FactsDefinition<Input extends $ZodType> = Omit<
  ToolDefinition<Input>,
  'execute' | 'render' | 'timeoutMs' | 'onError' | 'retry' | 'chains' | keyof ScheduleFacts
> & {
  readonly timeoutMs?: number | undefined;
  readonly onError?: OnError | undefined;
  readonly retry?: RetryOptions | ResolvedRetry | undefined;
};

/**
 * Checks a tool's facts (name, description, schema, mode, timeout, onError, idempotent, retry) and fills in
 * their defaults. Shared by `defineTool` and `toolContract`, so a contract and a tool agree on what is valid.
 * @throws {ConfigError} naming `where` and the field
 */
export function toolFacts<Input extends $ZodType>(where: ConfigError['where'], definition: FactsDefinition<Input>): ToolFacts<Input> {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError(where, option, expected, received);
  };
  if (typeof definition !== 'object' || definition === null) fail('definition', 'an object', definition);
  const { name, description, input, mode = 'exclusive', timeoutMs, onError, idempotent = false } = definition;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    fail('name', '1-128 characters of letters, digits, "_", "-", "." or ":"', name);
  }
  if (typeof description !== 'string') fail('description', 'a string', description);
  if (!isSchema(input)) fail('input', isZod3Schema(input) ? ZOD_3 : 'a zod 4 schema', input);
  if (mode !== 'parallel' && mode !== 'exclusive') fail('mode', '"parallel" or "exclusive"', mode);
  if (timeoutMs !== undefined && timeoutMs !== Infinity && !isPositiveDuration(timeoutMs)) {
    fail('timeoutMs', `1 to ${MAX_TIMER_MS} milliseconds (Node's longest timer), or Infinity for no limit`, timeoutMs);
  }
  if (onError !== undefined && onError !== 'cancel-rest' && onError !== 'continue') {
    fail('onError', '"cancel-rest" or "continue"', onError);
  }
  if (typeof idempotent !== 'boolean') fail('idempotent', 'a boolean', idempotent);
  const retry = resolveRetry(where, definition.retry, idempotent);
  return { name, description, input, mode, timeoutMs, onError, idempotent, retry };
}

function isSchema(value: unknown): value is $ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

/** What a zod 3 schema gets told: `zod` 3.x (and 3.25's root export) makes these. */
const ZOD_3 = "a zod 4 schema, not a zod 3 one (toolstream needs zod 4: `npm i zod@^4.2`, then import z from 'zod')";

/** A zod 3 schema: its definition in `_def`, no `_zod`. */
function isZod3Schema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && '_def' in value && typeof (value as { safeParse?: unknown }).safeParse === 'function';
}
