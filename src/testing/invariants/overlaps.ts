import type { ToolResult } from '../../types/toolResult.js';
import { violation, type InvariantViolation } from './violations.js';

/** A body starting or ending: a monitor's log entry, or one derived from a result's timing. */
export interface BodyPoint {
  readonly type: 'start' | 'end';
  readonly index: number;
  readonly exclusive: boolean;
}

/**
 * The bodies of started calls by their results' timing, as starts and ends in time order: each ran
 * from `startedAt` to `endedAt`, half-open, so at a tie an end comes before a start (a body that
 * ended as the next began did not overlap it) and an instant body overlaps nothing.
 */
export function timedBodies(results: readonly ToolResult[], exclusive: ReadonlySet<string>): BodyPoint[] {
  const points: { at: number; point: BodyPoint }[] = [];
  for (const result of results) {
    const { startedAt, endedAt } = result.timing;
    if (!result.started || startedAt === undefined || endedAt === undefined || !(endedAt > startedAt)) continue;
    const body = { index: result.index, exclusive: exclusive.has(result.name) };
    points.push({ at: startedAt, point: { type: 'start', ...body } }, { at: endedAt, point: { type: 'end', ...body } });
  }
  points.sort((a, b) => a.at - b.at || (a.point.type === b.point.type ? a.point.index - b.point.index : a.point.type === 'end' ? -1 : 1));
  return points.map(({ point }) => point);
}

/** The indexes of the calls whose bodies the log saw start, in order, once each. */
export function logStarts(log: readonly BodyPoint[]): number[] {
  return [...new Set(log.filter((entry) => entry.type === 'start').map((entry) => entry.index))];
}

/**
 * Invariants 2 and 3 over bodies in the order they started and ended: at each start, whether more
 * than `concurrency` bodies now run, and whether an exclusive body runs beside another. An end without
 * a start is ignored (a log taken mid-run). Constant time per point while nothing is wrong: a run of
 * many calls is checked in linear time.
 */
export function overlaps(points: readonly BodyPoint[], concurrency: number): InvariantViolation[] {
  const found: InvariantViolation[] = [];
  /** Running bodies by call index: how many (attempts of one call run one after another), and whether exclusive. */
  const running = new Map<number, { count: number; exclusive: boolean }>();
  let total = 0;
  /** How many of the calls in `running` are exclusive. */
  let exclusives = 0;
  for (const point of points) {
    const held = running.get(point.index);
    if (point.type === 'end') {
      if (held === undefined) continue;
      total--;
      if (--held.count > 0) continue;
      running.delete(point.index);
      if (held.exclusive) exclusives--;
      continue;
    }
    const others = running.size - (held === undefined ? 0 : 1);
    const otherExclusives = exclusives - (held?.exclusive === true ? 1 : 0);
    if ((point.exclusive && others > 0) || otherExclusives > 0) {
      const beside = [...running.keys()].filter((index) => index !== point.index);
      if (point.exclusive && others > 0) found.push(violation({ code: 'exclusive_overlap', index: point.index, overlapping: beside }));
      for (const index of beside) {
        if (running.get(index)!.exclusive) found.push(violation({ code: 'exclusive_overlap', index, overlapping: [point.index] }));
      }
    }
    if (held === undefined) {
      running.set(point.index, { count: 1, exclusive: point.exclusive });
      if (point.exclusive) exclusives++;
    } else held.count++;
    total++;
    if (total > concurrency) found.push(violation({ code: 'concurrency_exceeded', index: point.index, running: [...running.keys()], concurrency }));
  }
  return found;
}
