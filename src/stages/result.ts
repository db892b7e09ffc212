import { map, type OperatorFunction } from 'rxjs';
import type { ToolResult, ToolTiming } from '../toolResult.js';
import type { CallRecord } from '../internal/callRecord.js';
import { describeError } from '../internal/describe.js';
import { renderItems, renderValue } from '../internal/renderContent.js';

/**
 * The result stage: turns each finished record into its frozen `ToolResult`, rendering `content` for
 * the model and computing timing. The result, its `timing` and its `error` are frozen; `args` and
 * `value` are the model's and the tool's own objects, passed on as they are. A value that cannot be rendered (a BigInt, a cycle) becomes an
 * `invalid_output` error result rather than a stream error.
 *
 * @example
 * ```ts
 * records$.pipe(toResults()).subscribe((result) => Object.isFrozen(result)); // true
 * ```
 */
export function toResults(): OperatorFunction<CallRecord, ToolResult> {
  return map(toResult);
}

/** Builds the frozen result of one finished record. */
export function toResult(record: CallRecord): ToolResult {
  const finishedAt = performance.now();
  const { id, name, index, args, started } = record;
  const timing: ToolTiming = Object.freeze({
    receivedAt: record.receivedAt,
    startedAt: started ? record.startedAt : undefined,
    endedAt: started ? record.endedAt : undefined,
    finishedAt,
    durations: Object.freeze({
      intake: record.admittedAt - record.receivedAt,
      queue: started ? record.startedAt - record.admittedAt : 0,
      execute: started ? record.endedAt - record.startedAt : 0,
      total: finishedAt - record.receivedAt,
    }),
  });

  if (record.status === 'ok') {
    let content: string;
    try {
      content = renderValue(record.value, record.streamed);
    } catch (error) {
      const message = `Tool "${name}" returned a value that cannot be sent to the model: ${describeError(error)}`;
      const invalidOutput = Object.freeze({ code: 'invalid_output', message } as const);
      return Object.freeze({ id, name, index, status: 'error', content: message, error: invalidOutput, args, started, timing });
    }
    const { value, streamed } = record;
    return Object.freeze({ id, name, index, status: 'ok', content, value, streamed, args, started, timing });
  }

  const error = Object.freeze(record.error!);
  const status = record.status!;
  const partial = record.partial;
  if (partial !== undefined && partial.length > 0) {
    const content = `${renderItems(partial)}\n[output incomplete] ${error.message}`;
    return Object.freeze({ id, name, index, status, content, error, partial: Object.freeze(partial), args, started, timing });
  }
  return Object.freeze({ id, name, index, status, content: error.message, error, args, started, timing });
}
