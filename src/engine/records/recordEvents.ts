import type { ToolError } from '../../types/toolError.js';
import type { CallView } from '../../types/callView.js';

/**
 * The moments of a call that happen inside a stage, where no tap between stages can see them: the
 * events layer (`src/observe/eventLayer.ts`) attaches one of these to each record it watches
 * (`record.events`), and the stages report to it. A record nobody watches has none, and each report
 * is then one property read. The reports take the call as a {@link CallView}, not the engine's record:
 * the record holds its watcher (`events`), so the watcher's interface must not import the record back.
 */
export interface RecordEvents {
  /** The guard is about to ask the approver. */
  approvalRequested(call: CallView, reasons: readonly string[]): void;
  /** The approver answered (or the question timed out or was withdrawn). */
  approvalAnswered(call: CallView, approved: boolean, answer: string): void;
  /** The pool invoked the body. */
  started(call: CallView): void;
  /** The body called `ctx.progress(value)`. */
  progress(call: CallView, value: unknown): void;
  /** An attempt failed and another is due after `delayMs`. */
  retry(call: CallView, attempt: number, error: ToolError, delayMs: number): void;
}

/** A call and who watches it: what {@link emitRetry} needs of the engine's record. */
export interface WatchedCall extends CallView {
  readonly events: RecordEvents | undefined;
}

/**
 * The hook for retries: the pool calls it when an attempt of `record` failed and the next starts in
 * `delayMs` (see `Attempts`, rule 8b); the events layer turns it into a `retry` event.
 *
 * @example
 * ```ts
 * emitRetry(record, attempt, { code: 'tool_error', message }, delayMs);
 * ```
 */
export function emitRetry(record: WatchedCall, attempt: number, error: ToolError, delayMs: number): void {
  record.events?.retry(record, attempt, error, delayMs);
}
