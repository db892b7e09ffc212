import type { TimelineSpan } from './model.js';

/**
 * Puts intervals on as few rows as possible so that no two on a row overlap: in order of start (ties by
 * the order given), each takes the lowest-numbered row that was free by its start (a row whose last
 * interval ended at or before it). For intervals, this greedy choice is optimal: the number of rows is
 * the largest number of intervals open at one instant — for bodies, the pool's busiest moment — and each
 * interval keeps its one row from start to end. Returns the row of each interval, in the order given.
 */
export function assignRows(spans: readonly TimelineSpan[]): number[] {
  const order = spans.map((_, i) => i).sort((a, b) => spans[a]!.from - spans[b]!.from || a - b);
  const freeAt: number[] = []; // the end of each row's last interval
  const rows = new Array<number>(spans.length);
  for (const i of order) {
    const span = spans[i]!;
    let row = freeAt.findIndex((end) => end <= span.from);
    if (row === -1) row = freeAt.length;
    freeAt[row] = span.to;
    rows[i] = row;
  }
  return rows;
}
