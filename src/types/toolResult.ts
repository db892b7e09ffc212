// What the pipeline emits for every call. (A leaf: imports only from types/.)
import type { Decision, TraceEntry } from './decision.js';
import type { ToolError } from './toolError.js';

/**
 * How a call ended. `denied` is reserved for policy decisions; `suspended` (durable turns only) means it
 * waits for an approval to be answered later, through `resume`.
 */
export type ResultStatus = 'ok' | 'error' | 'denied' | 'cancelled' | 'suspended';

/**
 * When things happened to a call, in milliseconds on the pipeline's clock, and how long each stage
 * took. Stages a call never reached have a duration of `0`. The clock is `performance.now()` in real
 * time (sub-millisecond; add `performance.timeOrigin` for epoch time), and the scheduler's `now()` when
 * the pipeline's `scheduler` is a virtual one: inside a `TestScheduler`'s `run()`, every figure is a
 * frame (a body of `timer(10)` takes `durations.execute === 10`).
 *
 * @example
 * ```ts
 * const { durations } = result.timing;
 * console.log(`waited ${durations.queue} ms (${durations.limit} ms of it for the tool's limits), ran ${durations.execute} ms`);
 * ```
 */
export interface ToolTiming {
  /** The call entered the pipeline. */
  readonly receivedAt: number;
  /** The body started; absent when it never did. */
  readonly startedAt: number | undefined;
  /** The body's outcome was decided (value, error, timeout or cancellation); absent when it never started. */
  readonly endedAt: number | undefined;
  /** The result was built. */
  readonly finishedAt: number;
  readonly durations: {
    /** Parsing and validation. */
    readonly intake: number;
    /** Pre-execute policies, the guard and approval. */
    readonly policy: number;
    /**
     * Waiting to start: for a slot in the pool (behind barriers and the concurrency limit) and for the
     * tool's `limit` and `rateLimit` — `limit` included, so `queue - limit` is the wait for a slot.
     */
    readonly queue: number;
    /**
     * The part of `queue` spent waiting for the tool's `limit` (a permit) and `rateLimit` (a token);
     * `0` for a call that never started or never waited for either.
     */
    readonly limit: number;
    /** The body, from start to outcome. */
    readonly execute: number;
    /** Post-execute policies and retention. */
    readonly post: number;
    /** From received to result built. */
    readonly total: number;
  };
}

interface ResultBase {
  /** The call's id, as the model sent it. */
  readonly id: string;
  /** The tool name, as the model sent it. */
  readonly name: string;
  /** Arrival order within the subscription, from 0. Results are emitted in this order. */
  readonly index: number;
  /** The call's turn, as it carried it (`ToolCall.turn`); `undefined` for calls without one. */
  readonly turn: string | undefined;
  /** The model-facing text: the rendered value, or the error message. */
  readonly content: string;
  /** The effective arguments: parsed and validated when intake got that far, else as received. */
  readonly args: unknown;
  /** The validated arguments before any policy rewrote them (the same value as `args` when none did). */
  readonly originalArgs: unknown;
  /** The policies that rewrote the arguments, in order. */
  readonly rewrittenBy: readonly string[];
  /**
   * The folded pre-execute decision (`deny` when a policy failed); `undefined` when the call never got
   * that far (an intake error, or a rejected argument rewrite).
   */
  readonly decision: Decision | undefined;
  /** What the policies did, in order. */
  readonly trace: readonly TraceEntry[];
  /** Metadata added by post-execute policies. */
  readonly meta: Readonly<Record<string, unknown>>;
  /** What the output budget dropped (exact counts); `undefined` when nothing was. */
  readonly omitted: { readonly items: number; readonly characters: number; readonly lines: number } | undefined;
  /**
   * Whether the tool body started — or, with execute middleware, the call's execution (the chain runs
   * in the body's place: a call a middleware answered or denied without the body counts as started).
   */
  readonly started: boolean;
  /**
   * How many times the body ran (with execute middleware: how many attempts the chain ran): 1 when it
   * was not retried, more when the tool's `retry` ran it again (the trace holds each failed attempt's
   * error), 0 when it never started.
   */
  readonly attempts: number;
  readonly timing: ToolTiming;
}

/**
 * The body produced a value. For a streamed output (Observable or AsyncIterable) `value` is the array
 * of items and `streamed` is `true`.
 */
export interface ToolResultOk extends ResultBase {
  readonly status: 'ok';
  readonly value: unknown;
  readonly streamed: boolean;
  readonly error?: undefined;
}

/** The call produced no value; `error.code` says why. */
export interface ToolResultFailed extends ResultBase {
  readonly status: 'error' | 'denied' | 'cancelled' | 'suspended';
  readonly error: ToolError;
  readonly value?: undefined;
  /**
   * A streamed output that failed midway: the items that arrived before the failure (within the item
   * budget). Their rendering leads `content`, so the model sees what it got.
   */
  readonly partial?: readonly unknown[];
  /** Whether a streamed output failed midway (the tool's state, apart from any budget `omitted`). */
  readonly incomplete: boolean;
}

/**
 * What the pipeline emits for every call, frozen. Narrow on `status` to reach `value` or `error`.
 *
 * @example
 * ```ts
 * for (const result of await pipeline.run(calls)) {
 *   if (result.status === 'ok') use(result.value);
 *   else console.warn(result.id, result.error.code, result.error.message);
 * }
 * ```
 */
export type ToolResult = ToolResultOk | ToolResultFailed;
