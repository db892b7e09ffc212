import type { ToolResult } from '../../types/toolResult.js';

/**
 * What the timeline draws, independent of where the facts came from. Today `renderTimeline` fills it
 * from results (`callsFromResults`); the lifecycle events of issue 14 map onto it one to one, so a
 * later `PipelineEvent[]` can feed the same renderer:
 *
 * | field          | from a `ToolResult`                           | from events                          |
 * |----------------|-----------------------------------------------|--------------------------------------|
 * | `receivedAt`   | `timing.receivedAt`                           | `received`                           |
 * | `waits`        | the stage durations (policy, queue, limit)    | `decided`, `approval-*`, `started`   |
 * | `attempts`     | one, `startedAt` → `endedAt`                  | `started` / `retry` → `finished`     |
 * | `finishedAt`   | `timing.finishedAt`                           | `finished`                           |
 * | `committedAt`  | the reorder release, derived (see below)      | `result`                             |
 *
 * A result gives one span for all of a retried body's attempts (`attemptCount` says how many, on the
 * bar's title); events give one segment per attempt. Waits for a tool's `limit` or `rateLimit` come
 * from `timing.durations.limit` (results only: events do not tell them apart from the queue).
 */

/** A result's status, with timeouts told apart from other errors. */
export type TimelineStatus = 'ok' | 'error' | 'denied' | 'cancelled' | 'timeout' | 'suspended';

/**
 * Why a call waited before its body started: policies, an approval, a slot in the pool (`queue`), or
 * the tool's `limit` / `rateLimit` (`limit`).
 */
export type TimelineWaitKind = 'policy' | 'approval' | 'queue' | 'limit';

/** An interval in milliseconds on the pipeline's clock (as `ToolTiming`: `performance.now()`, or a virtual scheduler's frames). */
export interface TimelineSpan {
  readonly from: number;
  readonly to: number;
}

export interface TimelineWait extends TimelineSpan {
  readonly kind: TimelineWaitKind;
}

/** One call, as the timeline sees it. */
export interface TimelineCall {
  readonly id: string;
  readonly name: string;
  /** Arrival order within its subscription. */
  readonly index: number;
  readonly status: TimelineStatus;
  /** The error code, when the call did not end `ok`. */
  readonly code: string | undefined;
  /** A barrier: nothing else ran while it did. */
  readonly exclusive: boolean;
  readonly receivedAt: number;
  /** The waits before the body started (or before the call was answered, when it never started). */
  readonly waits: readonly TimelineWait[];
  /** The body's runs, in order; empty when it never started. */
  readonly attempts: readonly TimelineSpan[];
  /** How many times the body ran (`result.attempts`), even when `attempts` holds them as one span. */
  readonly attemptCount: number;
  /** The result was built (completion order). */
  readonly finishedAt: number;
  /** The result was given out in model order. */
  readonly committedAt: number;
}

/** A rectangle in px, from the picture's top left (the layout's unit). */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** What the timeline knows of a call from its result alone: who it is and how it ended. */
export function callIdentity(result: ToolResult, exclusive: ReadonlySet<string>): Pick<TimelineCall, 'id' | 'name' | 'index' | 'status' | 'code' | 'exclusive' | 'attemptCount'> {
  const timeout = result.status === 'error' && result.error.code === 'timeout';
  return {
    id: result.id,
    name: result.name,
    index: result.index,
    status: timeout ? 'timeout' : result.status,
    code: result.error?.code,
    exclusive: exclusive.has(result.name),
    attemptCount: result.attempts,
  };
}
