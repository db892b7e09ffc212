import type { ToolResult } from '../../types/toolResult.js';
import { ConfigError } from '../../util/errors.js';
import type { TurnOutcome } from './outcome.js';

/**
 * What a loop has done so far, as a stop condition sees it after a step whose calls were all answered.
 *
 * @example
 * ```ts
 * const wroteTwice: StopCondition = ({ steps }) => steps.flatMap((s) => s.results).filter((r) => r.name === 'write_file').length >= 2;
 * ```
 */
export interface LoopState {
  /** The step just ended (1 for the first model response; continued loops count on). */
  readonly step: number;
  /** The steps this call of the loop ran (a continued turn first), each with its results and text. */
  readonly steps: readonly { readonly outcome: TurnOutcome; readonly results: readonly ToolResult[]; readonly text: string }[];
}

/**
 * Stops a loop before it requests the next response (what the AI SDK calls `stopWhen`): asked after
 * each step whose calls were all answered; `true` stops it with outcome `'stopped'`. It may be async;
 * a throw rejects the loop.
 *
 * @example
 * ```ts
 * const stopWhen: StopCondition[] = [stepCountIs(5), hasToolCall('final_answer')];
 * ```
 */
export type StopCondition = (state: LoopState) => boolean | PromiseLike<boolean>;

/**
 * Stops once `count` steps have run (counted across continuations).
 *
 * @throws {ConfigError} when `count` is not a positive integer.
 *
 * @example
 * ```ts
 * await runAnthropicLoop(pipeline, { messages, request, stopWhen: stepCountIs(3) });
 * ```
 */
export function stepCountIs(count: number): StopCondition {
  if (!Number.isSafeInteger(count) || count < 1) throw new ConfigError('stepCountIs', 'count', 'a positive integer', count);
  return ({ step }) => step >= count;
}

/**
 * Stops after a step that called one of these tools (answered: the loop stops with its results).
 *
 * @example
 * ```ts
 * await runOpenAIChatLoop(pipeline, { messages, request, stopWhen: hasToolCall('final_answer') });
 * ```
 */
export function hasToolCall(...names: readonly string[]): StopCondition {
  return ({ steps }) => steps.at(-1)?.results.some((result) => names.includes(result.name)) ?? false;
}
