import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { AnyTool, OnError } from './defineTool.js';
import { ConfigError } from './errors.js';
import { isPositiveDuration } from './internal/validate.js';

/**
 * Options of {@link createPipeline}. Every field is validated when the pipeline is built.
 *
 * @example
 * ```ts
 * const options: PipelineOptions = {
 *   tools: [readFile, writeFile],
 *   concurrency: 4,
 *   onError: 'continue',
 *   defaultTimeoutMs: 30_000,
 * };
 * ```
 */
export interface PipelineOptions {
  /** The tools the model may call, built with `defineTool`. Names must be unique. */
  readonly tools: readonly AnyTool[];
  /**
   * How many tool bodies may run at once within one subscription (parallel calls share the pool; an
   * exclusive call runs alone).
   * @default 10
   */
  readonly concurrency?: number;
  /**
   * What a failed call (throw, rejection, timeout) does to the other calls of the subscription.
   * A tool's own `onError` overrides it.
   * @default 'cancel-rest'
   */
  readonly onError?: OnError;
  /** Time limit for tools without their own `timeoutMs`. @default no limit */
  readonly defaultTimeoutMs?: number;
  /**
   * After a body's signal aborted (timeout, cancellation), how long its slot stays taken while the body
   * winds down. A body that honours its signal frees the slot as soon as it settles; one that ignores it
   * is abandoned after this long, so a hung tool cannot stall the pool forever. `Infinity` never
   * abandons: slots are only freed by bodies settling.
   * @default 1000
   */
  readonly abortGraceMs?: number;
  /**
   * The scheduler for timers (timeouts and grace periods). Tests pass a virtual-time scheduler.
   * @default asyncScheduler
   */
  readonly scheduler?: SchedulerLike;
}

/** Options with defaults applied and tools indexed by name. */
export interface PipelineSettings {
  readonly tools: ReadonlyMap<string, AnyTool>;
  readonly concurrency: number;
  readonly onError: OnError;
  readonly defaultTimeoutMs: number | undefined;
  readonly abortGraceMs: number;
  readonly scheduler: SchedulerLike;
}

/** Validates `options` and fills in defaults. @throws {ConfigError} naming the first bad option. */
export function resolvePipelineOptions(options: PipelineOptions): PipelineSettings {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('createPipeline', option, expected, received);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  const {
    tools,
    concurrency = 10,
    onError = 'cancel-rest',
    defaultTimeoutMs,
    abortGraceMs = 1000,
    scheduler = asyncScheduler,
  } = options;

  if (!Array.isArray(tools)) fail('tools', 'an array of tools made by defineTool', tools);
  const byName = new Map<string, AnyTool>();
  tools.forEach((tool: unknown, i) => {
    if (!isTool(tool)) return fail(`tools[${i}]`, 'a tool made by defineTool', tool);
    if (byName.has(tool.name)) return fail(`tools[${i}].name`, 'unique among the tools', tool.name);
    byName.set(tool.name, tool);
  });
  if (!(concurrency === Infinity || (Number.isInteger(concurrency) && concurrency >= 1))) {
    fail('concurrency', 'a positive integer or Infinity', concurrency);
  }
  if (onError !== 'cancel-rest' && onError !== 'continue') fail('onError', '"cancel-rest" or "continue"', onError);
  if (defaultTimeoutMs !== undefined && !isPositiveDuration(defaultTimeoutMs)) {
    fail('defaultTimeoutMs', 'a positive number of milliseconds', defaultTimeoutMs);
  }
  if (!(abortGraceMs === Infinity || (typeof abortGraceMs === 'number' && abortGraceMs >= 0))) {
    fail('abortGraceMs', 'a non-negative number of milliseconds or Infinity', abortGraceMs);
  }
  if (typeof scheduler?.schedule !== 'function' || typeof scheduler.now !== 'function') {
    fail('scheduler', 'an RxJS SchedulerLike', scheduler);
  }
  return { tools: byName, concurrency, onError, defaultTimeoutMs, abortGraceMs, scheduler };
}

function isTool(value: unknown): value is AnyTool {
  if (typeof value !== 'object' || value === null) return false;
  const tool = value as Partial<AnyTool>;
  return typeof tool.name === 'string' && typeof tool.execute === 'function' && Object.isFrozen(value);
}
