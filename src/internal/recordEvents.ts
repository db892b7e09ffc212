import type { ToolError } from '../toolError.js';
import type { CallRecord } from './callRecord.js';

/**
 * The moments of a call that happen inside a stage, where no tap between stages can see them: the
 * events layer (`src/observe/eventLayer.ts`) attaches one of these to each record it watches
 * (`record.events`), and the stages report to it. A record nobody watches has none, and each report
 * is then one property read.
 */
export interface RecordEvents {
  /** The guard is about to ask the approver. */
  approvalRequested(record: CallRecord, reasons: readonly string[]): void;
  /** The approver answered (or the question timed out or was withdrawn). */
  approvalAnswered(record: CallRecord, approved: boolean, answer: string): void;
  /** The pool invoked the body. */
  started(record: CallRecord): void;
  /** The body called `ctx.progress(value)`. */
  progress(record: CallRecord, value: unknown): void;
  /** An attempt failed and another is due after `delayMs`. */
  retry(record: CallRecord, attempt: number, error: ToolError, delayMs: number): void;
}

/**
 * The hook for retries: the pool calls it when an attempt of `record` failed and the next starts in
 * `delayMs` (see `CallPool` point 8b); the events layer turns it into a `retry` event.
 *
 * @example
 * ```ts
 * emitRetry(record, attempt, { code: 'tool_error', message }, delayMs);
 * ```
 */
export function emitRetry(record: CallRecord, attempt: number, error: ToolError, delayMs: number): void {
  record.events?.retry(record, attempt, error, delayMs);
}
