import type { PipelineEvent } from '../../types/events.js';
import type { ToolMode } from '../../types/tool.js';
import type { ToolCall } from '../../types/toolCall.js';
import type { ToolResult } from '../../types/toolResult.js';
import { TestingOptionError } from '../errors.js';
import type { MonitorLog } from './monitor.js';
import { logStarts, overlaps, timedBodies, type BodyPoint } from './overlaps.js';
import { violation, type InvariantReport, type InvariantViolation } from './violations.js';

/**
 * One run, as `checkInvariants` reads it.
 *
 * @example
 * ```ts
 * const input: InvariantInput = { calls, results, events, log: monitor.log, tools, concurrency: 4 };
 * ```
 */
export interface InvariantInput {
  /** The calls as the pipeline received them, in order (`index` 0, 1, …): e.g. what an adapter emitted. */
  readonly calls: readonly ToolCall[];
  /** The results, as emitted. */
  readonly results: readonly ToolResult[];
  /** The run's events (`pipeline.events(calls)`, or an event observer's), when you have them. */
  readonly events?: readonly PipelineEvent[] | undefined;
  /** The log of an {@link invariantMonitor} of this run: the exact order of bodies. */
  readonly log?: MonitorLog | undefined;
  /** The pipeline's tools (their `mode` says which calls are exclusive). */
  readonly tools: readonly { readonly name: string; readonly mode: ToolMode }[];
  /** The pipeline's `concurrency` (`Infinity` for none). */
  readonly concurrency: number;
}

/**
 * Checks one run against toolstream's invariants, for your own property tests: every call got
 * exactly one result, in model order, with its id; never more than `concurrency` bodies ran at once;
 * an exclusive call's body overlapped no other; no body ran for a call that was not allowed or approved
 * (invariant 5), nor for one cancelled before it started (invariant 6). See {@link InvariantViolation}.
 *
 * Where bodies ran comes from, best first:
 * - `log` — an {@link invariantMonitor}'s: the exact order of starts and ends. **Pass the monitor's log
 *   for exact checks.**
 * - otherwise the results: a started call ran from `timing.startedAt` (when its `started` event
 *   came) to `timing.endedAt`, half-open. Timestamps can tie, and a tie is taken as no overlap, so this
 *   never reports an overlap that did not happen, but can miss one (on a virtual clock that stands
 *   still, every body is an instant).
 * Admission is read from each started call's result (`decision: 'allow'`, or an approval answered
 * `'allowed-once'` in its `trace`) and, when `events` are given, also from its events: a `decided`
 * `allow` or an `approval-answered` that approved, before its `started`; and no `started` after the
 * call's `finished` as cancelled.
 *
 * @param input The calls, results, events and log of one run, and the pipeline's tools and concurrency.
 * @returns `{ ok: true }`, or `{ ok: false, violations }`.
 * @throws {TestingOptionError} when `calls`, `results` or `tools` is not an array, or `concurrency`
 *   is not a positive integer or `Infinity`.
 *
 * @example
 * ```ts
 * import fc from 'fast-check';
 * import { checkInvariants, invariantMonitor, toolCalls } from 'toolstream/testing';
 *
 * await fc.assert(
 *   fc.asyncProperty(toolCalls({ tools: arguments, hostile: true }), async (calls) => {
 *     const monitor = invariantMonitor();
 *     const pipeline = createPipeline({ tools, concurrency: 3, execute: [monitor.execute] });
 *     const results = await pipeline.run(calls);
 *     expect(checkInvariants({ calls, results, log: monitor.log, tools, concurrency: 3 })).toEqual({ ok: true });
 *   }),
 * );
 * ```
 */
export function checkInvariants(input: InvariantInput): InvariantReport {
  const { calls, results, events, log, tools, concurrency } = checked(input);
  const violations: InvariantViolation[] = [];
  const byIndex = oneResultEach(calls, results, violations);

  const exclusive = new Set(tools.filter((tool) => tool.mode === 'exclusive').map((tool) => tool.name));
  const points: readonly BodyPoint[] = log ?? timedBodies(results, exclusive);
  violations.push(...overlaps(points, concurrency));

  // Admission: each call whose body ran (by the log, or by its result), once.
  const ran = new Set(log === undefined ? [...byIndex.values()].filter((r) => r.started).map((r) => r.index) : logStarts(log));
  for (const index of ran) {
    const result = byIndex.get(index);
    if (result !== undefined) admission(result, violations);
  }
  if (events !== undefined) violations.push(...eventAdmission(events, byIndex));
  return violations.length === 0 ? { ok: true } : { ok: false, violations: dedupe(violations) };
}

/** Invariant 1: one result per call, in model order, with the call's id; returns the results by index. */
function oneResultEach(calls: readonly ToolCall[], results: readonly ToolResult[], violations: InvariantViolation[]): Map<number, ToolResult> {
  const byIndex = new Map<number, ToolResult>();
  let latest = -1;
  results.forEach((result, position) => {
    const { index, id } = result;
    if (byIndex.has(index)) return void violations.push(violation({ code: 'duplicate_result', index, id, position }));
    byIndex.set(index, result);
    if (!(index >= 0 && index < calls.length)) violations.push(violation({ code: 'unexpected_result', index, id, position }));
    if (index < latest) violations.push(violation({ code: 'out_of_order', index, position, after: latest }));
    latest = Math.max(latest, index);
  });
  calls.forEach((call, index) => {
    const expected = callId(call);
    const result = byIndex.get(index);
    if (result === undefined) violations.push(violation({ code: 'missing_result', index, id: expected }));
    // A call without a usable id is answered `invalid_call` under a made-up one: nothing to compare.
    else if (expected !== undefined && result.id !== expected) violations.push(violation({ code: 'id_mismatch', index, expected, received: result.id }));
  });
  return byIndex;
}

/** Invariants 5 and 6 for a call whose body ran: it was admitted, not cancelled first, and says it started. */
function admission(result: ToolResult, violations: InvariantViolation[]): void {
  const { index, id, decision } = result;
  if (!result.started) {
    if (result.status === 'cancelled') return void violations.push(violation({ code: 'started_after_cancel', index, id }));
    if (result.status === 'denied' && !admitted(result)) return void violations.push(violation({ code: 'not_admitted', index, id, decision }));
    return void violations.push(violation({ code: 'start_not_reported', index, id, status: result.status }));
  }
  if (!admitted(result)) violations.push(violation({ code: 'not_admitted', index, id, decision }));
}

/** Allowed by the policies, or asked and approved once. */
function admitted(result: ToolResult): boolean {
  if (result.decision === 'allow') return true;
  return result.decision === 'ask' && result.trace.some((entry) => entry.stage === 'approval' && entry.event === 'answer' && entry.answer === 'allowed-once');
}

/** Invariants 5 and 6 by the events: a `started` only after an admission, and never after the call finished cancelled. */
function eventAdmission(events: readonly PipelineEvent[], byIndex: ReadonlyMap<number, ToolResult>): InvariantViolation[] {
  const found: InvariantViolation[] = [];
  const admittedAt = new Set<number>();
  const cancelled = new Set<number>();
  for (const event of events) {
    if (event.type === 'decided' && event.decision === 'allow') admittedAt.add(event.index);
    else if (event.type === 'approval-answered' && event.approved) admittedAt.add(event.index);
    else if (event.type === 'finished' && event.status === 'cancelled') cancelled.add(event.index);
    else if (event.type === 'started') {
      if (cancelled.has(event.index)) found.push(violation({ code: 'started_after_cancel', index: event.index, id: event.id }));
      else if (!admittedAt.has(event.index)) found.push(violation({ code: 'not_admitted', index: event.index, id: event.id, decision: byIndex.get(event.index)?.decision }));
    }
  }
  return found;
}

function callId(call: unknown): string | undefined {
  const id = typeof call === 'object' && call !== null ? (call as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The same violation found twice (by the result and by the events) is reported once. */
function dedupe(violations: readonly InvariantViolation[]): InvariantViolation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = JSON.stringify(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function checked(input: InvariantInput): InvariantInput {
  if (typeof input !== 'object' || input === null) throw new TestingOptionError('checkInvariants', 'input', 'an object', input);
  for (const option of ['calls', 'results', 'tools'] as const) {
    if (!Array.isArray(input[option])) throw new TestingOptionError('checkInvariants', option, 'an array', input[option]);
  }
  for (const option of ['events', 'log'] as const) {
    if (input[option] !== undefined && !Array.isArray(input[option])) throw new TestingOptionError('checkInvariants', option, 'an array, if given', input[option]);
  }
  const { concurrency } = input;
  if (!(concurrency === Infinity || (Number.isInteger(concurrency) && concurrency >= 1))) {
    throw new TestingOptionError('checkInvariants', 'concurrency', 'a positive integer or Infinity', concurrency);
  }
  return input;
}
