import { assignRows } from './lanes.js';
import type { TimelineCall, TimelineSpan } from './model.js';

/** A call placed on a lane: its body's lane (or the not-started row) and the row of its waits there. */
export interface PlacedCall {
  readonly call: TimelineCall;
  /** The lane index, or `-1` for the row of calls that never started. */
  readonly lane: number;
  /** Which wait row of the lane its waits take (waits of calls sharing a lane may overlap in time). */
  readonly waitRow: number;
}

export interface TimelineLayout {
  /** Earliest time drawn; the axis starts here at 0. */
  readonly t0: number;
  /** Latest time drawn. */
  readonly t1: number;
  readonly placed: readonly PlacedCall[];
  /** How many body lanes (the pool's busiest moment). */
  readonly lanes: number;
  /** How many wait rows each lane has, and then the not-started row (last). */
  readonly waitRows: readonly number[];
  /** Whether any call never started (the extra row is drawn). */
  readonly notStarted: boolean;
}

const envelope = (spans: readonly TimelineSpan[]): TimelineSpan => ({
  from: Math.min(...spans.map((s) => s.from)),
  to: Math.max(...spans.map((s) => s.to)),
});

/**
 * Lanes for the bodies (`assignRows` over each call's first start to last end: a call keeps one lane,
 * and there are as many lanes as calls ever ran at once), one row for calls that never started (their
 * spans from received to finished get sub-rows the same way), and within each lane rows for the waits.
 */
export function layoutTimeline(calls: readonly TimelineCall[]): TimelineLayout {
  const ran = calls.filter((c) => c.attempts.length > 0);
  const never = calls.filter((c) => c.attempts.length === 0);
  const bodyLanes = assignRows(ran.map((c) => envelope(c.attempts)));
  const lanes = bodyLanes.reduce((n, lane) => Math.max(n, lane + 1), 0);
  const neverRows = assignRows(never.map((c) => ({ from: c.receivedAt, to: c.finishedAt })));
  const laneOf = new Map<TimelineCall, number>();
  ran.forEach((c, i) => laneOf.set(c, bodyLanes[i]!));
  never.forEach((c) => laneOf.set(c, -1));
  const waitRowOf = new Map<TimelineCall, number>();
  const waitRows: number[] = [];
  for (let lane = -1; lane < lanes; lane++) {
    const here = calls.filter((c) => laneOf.get(c) === lane && c.waits.length > 0);
    const rows = assignRows(here.map((c) => envelope(c.waits)));
    here.forEach((c, i) => waitRowOf.set(c, rows[i]!));
    if (lane === -1) {
      // The not-started row stacks whole calls, not waits: its sub-rows are `neverRows`.
      never.forEach((c, i) => waitRowOf.set(c, neverRows[i]!));
    } else waitRows[lane] = rows.reduce((n, row) => Math.max(n, row + 1), 0);
  }
  waitRows.push(neverRows.reduce((n, row) => Math.max(n, row + 1), 0));
  const times = calls.flatMap((c) => [c.receivedAt, c.committedAt, c.finishedAt, ...c.attempts.map((a) => a.to)]);
  return {
    t0: times.length > 0 ? Math.min(...times) : 0,
    t1: times.length > 0 ? Math.max(...times) : 0,
    placed: calls.map((call) => ({ call, lane: laneOf.get(call)!, waitRow: waitRowOf.get(call) ?? 0 })),
    lanes,
    waitRows,
    notStarted: never.length > 0,
  };
}
