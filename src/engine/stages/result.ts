import { map, type OperatorFunction } from 'rxjs';
import type { CallRecord } from '../records/callRecord.js';
import { renderRecordContent } from '../recordContent.js';
import type { TraceEntry } from '../../types/decision.js';
import type { ToolResult, ToolTiming } from '../../types/toolResult.js';
import { warnObserverError } from '../../util/observerWarning.js';

const NONE: readonly never[] = Object.freeze([]);
const NO_META: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * The result stage: turns each finished record into its frozen `ToolResult`, with `content` rendered
 * for the model (unless post-execute already did) and timing computed. A value that cannot be rendered
 * (a BigInt, a cycle) becomes an `invalid_output` error result rather than a stream error. The result,
 * its `timing`, `error`, `trace`, `meta` and `omitted` are frozen; `args` and `value` are the model's
 * and the tool's own objects, passed on as they are.
 *
 * @example
 * ```ts
 * records$.pipe(toResults()).subscribe((result) => Object.isFrozen(result)); // true
 * ```
 */
export function toResults(
  observers: readonly ((result: ToolResult) => void)[] = [],
  onObserverError: (error: unknown, result: ToolResult) => void = warnObserverError,
): OperatorFunction<CallRecord, ToolResult> {
  if (observers.length === 0) return map(toResult);
  return map((record) => {
    const result = toResult(record);
    for (const observe of observers) {
      try {
        observe(result);
      } catch (error) {
        // Never into the stream, never thrown later: an observer cannot crash the process or lose a result.
        try {
          onObserverError(error, result);
        } catch {
          // the handler failed too: nothing is left to tell
        }
      }
    }
    return result;
  });
}

/** Builds the frozen result of one finished record. */
export function toResult(record: CallRecord): ToolResult {
  const content = renderRecordContent(record);
  const finishedAt = record.clock();
  const { id, name, index, turn, args, started, decision } = record;
  const attempts = started ? Math.max(record.attempts, 1) : 0;
  const decidedAt = record.decidedAt || record.admittedAt;
  const timing: ToolTiming = Object.freeze({
    receivedAt: record.receivedAt,
    startedAt: started ? record.startedAt : undefined,
    endedAt: started ? record.endedAt : undefined,
    finishedAt,
    durations: Object.freeze({
      intake: record.admittedAt - record.receivedAt,
      policy: record.decidedAt > 0 ? record.decidedAt - record.admittedAt : 0,
      queue: started ? record.startedAt - decidedAt : 0,
      limit: started ? record.limitWaitMs : 0,
      execute: started ? record.endedAt - record.startedAt : 0,
      post: record.postMs,
      total: finishedAt - record.receivedAt,
    }),
  });
  const originalArgs = record.originalArgs === undefined ? args : record.originalArgs;
  const rewrittenBy = record.rewrittenBy === undefined ? NONE : Object.freeze(record.rewrittenBy);
  const trace: readonly TraceEntry[] =
    record.trace === undefined ? NONE : Object.freeze(record.trace.map((entry) => Object.freeze(entry)));
  const meta = record.meta === undefined ? NO_META : Object.freeze(record.meta);
  const omitted = record.omitted === undefined ? undefined : Object.freeze(record.omitted);
  // One literal per shape, no spread: this runs once per call on the hot path.
  if (record.status === 'ok') {
    const { value, streamed } = record;
    return Object.freeze({
      id, name, index, turn, status: 'ok', content, value, streamed,
      args, originalArgs, rewrittenBy, decision, trace, meta, omitted, started, attempts, timing,
    });
  }
  const status = record.status!;
  const error = Object.freeze(record.error!);
  const { partial } = record;
  if (partial === undefined) {
    return Object.freeze({
      id, name, index, turn, status, content, error, incomplete: false,
      args, originalArgs, rewrittenBy, decision, trace, meta, omitted, started, attempts, timing,
    });
  }
  return Object.freeze({
    id, name, index, turn, status, content, error, partial: Object.freeze(partial), incomplete: true,
    args, originalArgs, rewrittenBy, decision, trace, meta, omitted, started, attempts, timing,
  });
}
