import type { UIMessageChunk } from 'ai';
import { concatMap, type OperatorFunction } from 'rxjs';
import type { PipelineEvent } from '../../types/events.js';
import { toAISDKToolOutputChunks } from './toAISDKToolOutputChunks.js';

/**
 * The UI message stream chunks of a run's events, so a `useChat` page shows each tool's progress live:
 * every `progress` event becomes a preliminary tool output (`{ type: 'tool-output-available',
 * toolCallId, output: value, preliminary: true }` — the part's `output` is the latest progress value
 * while `part.preliminary` is true), and every `result` event the final output or error, as
 * {@link toAISDKToolOutputChunks} writes it (which replaces the preliminary one). Other events write
 * nothing. The tool parts must exist first: in a model loop the step's own chunks carry the calls'
 * inputs; otherwise write a `tool-input-available` chunk per call before piping the events.
 *
 * @returns An operator over `pipeline.events(...)`; write each chunk with `writer.write(chunk)`.
 *
 * @example
 * ```ts
 * pipeline.events(calls).pipe(toAISDKEventChunks()).subscribe((chunk) => writer.write(chunk));
 * // { type: 'tool-output-available', toolCallId: 'b1', output: { done: 1, total: 3 }, preliminary: true }
 * // { type: 'tool-output-available', toolCallId: 'b1', output: 'built 3 files' }
 * ```
 */
export function toAISDKEventChunks(): OperatorFunction<PipelineEvent, UIMessageChunk> {
  return concatMap((event): UIMessageChunk[] => {
    if (event.type === 'progress') return [{ type: 'tool-output-available', toolCallId: event.id, output: event.value, preliminary: true }];
    if (event.type === 'result') return toAISDKToolOutputChunks([event.result]);
    return [];
  });
}
