import { concatMap, type OperatorFunction } from 'rxjs';
import type { ToolResult } from '../types/toolResult.js';
import type { TurnOptions, TurnProject } from '../types/turns.js';
import { turnOf } from './turn.js';
import type { Pipeline } from '../types/pipeline.js';

/**
 * Runs a turn per value, one after the other: `concatMap` for a conversation. Each turn is
 * `project(value)`'s model stream through `pipeline.operator()`, a run of its own, started when the one
 * before it ended; nothing is aborted. The output is the turns' results one turn after the other, each
 * in model order; it completes after the last turn. Unsubscribing drops everything and aborts the
 * running turn's signal. A turn's failure is forwarded, as by `switchTurns` (`catchError` in `project`
 * to go on).
 *
 * @example
 * ```ts
 * import { queueTurns } from 'toolstream';
 *
 * userMessages$
 *   .pipe(queueTurns(pipeline, (message, { signal }) => fromAnthropicStream(client.messages.stream(requestFor(message), { signal }))))
 *   .subscribe((result) => history.push(result));
 * ```
 */
export function queueTurns<T>(pipeline: Pick<Pipeline, 'operator'>, project: TurnProject<T>, options: TurnOptions<T> = {}): OperatorFunction<T, ToolResult> {
  return concatMap((value, index) => turnOf(pipeline, project, options, value, index).results);
}
