import { placeLabel, type LabelPlan } from './labels.js';
import type { Box, TimelineCall, TimelineWaitKind } from './model.js';
import { CELL, HEADING_CHAR } from './styles.js';
import { textCells } from './svgText.js';

export type { Box } from './model.js';

/** One run of a call's body (`body`), or the mark of a call that never started (`outcome`). */
export interface MarkPlan {
  readonly part: 'body' | 'outcome';
  readonly from: number;
  readonly to: number;
  readonly box: Box;
}

/** One call's row: its band, its marks, its waits, its commit tick and its label. */
export interface RowPlan {
  readonly call: TimelineCall;
  /** The row's band: nothing of another row is drawn in it. */
  readonly band: Box;
  readonly marks: readonly MarkPlan[];
  readonly waits: readonly { readonly kind: TimelineWaitKind; readonly box: Box }[];
  /** Where the result was given out in model order, and its tick. */
  readonly commit: { readonly x: number; readonly box: Box };
  readonly label: LabelPlan;
}

/** The whole picture, in px: what `drawTimeline` writes out, and what the layout tests check. */
export interface TimelinePlan {
  readonly width: number;
  readonly height: number;
  readonly t0: number;
  readonly t1: number;
  /** The time axis: `x(t)` from `plotLeft` (at `t0`) to `plotRight` (at `t1`). */
  readonly x: (t: number) => number;
  readonly plotLeft: number;
  readonly plotRight: number;
  /** The top of the first row and the bottom of the last (the axis is drawn there). */
  readonly plotTop: number;
  readonly plotBottom: number;
  /** One per call, in order of arrival (model order within a run). */
  readonly rows: readonly RowPlan[];
}

/** Room beside the plot for the axis labels at its ends; a label may use it. */
export const MARGIN = 24;
export const ROW = 26; // a row's height with a one-line label
export const BAR = 16; // a body's height
export const BAR_TOP = 5; // from the top of the row
export const LINE = 15; // each line of a label drawn below its marks
const WAIT = 6; // a wait strip's height, centred on the bar
const MIN_BODY = 2; // px: a body of no duration is still drawn
const MIN_OUTCOME = 6; // px: a call that never started gets a mark this wide at least
const AXIS = 30;
/** The plot's width, when it follows the schedule. */
export const MIN_PLOT = 360;
export const MAX_PLOT = 2000;
/** The median body's width the plot aims for: a schedule many times longer than its calls gets wider. */
const MEDIAN_BODY = 60;

/**
 * Lays the calls out: a row per call in order of arrival; times on a linear axis; each call's label
 * placed where it fits (`placeLabel`). `width` fixes the picture's width; without it the width follows
 * the schedule (see {@link autoPlotWidth}). `top` is where the first row starts (below the legend).
 */
export function planTimeline(calls: readonly TimelineCall[], width: number | undefined, top: (width: number) => number, title: string): TimelinePlan {
  const ordered = calls.map((call, i) => ({ call, i })).sort((a, b) => a.call.receivedAt - b.call.receivedAt || a.i - b.i).map((c) => c.call);
  const times = calls.flatMap((c) => [c.receivedAt, c.committedAt, c.finishedAt, ...c.attempts.map((a) => a.to)]);
  const t0 = times.length > 0 ? Math.min(...times) : 0;
  const t1 = times.length > 0 ? Math.max(...times) : 0;
  const plan = (plotWidth: number, pictureWidth: number) => rowsAt(ordered, t0, t1, plotWidth, pictureWidth, top(pictureWidth));
  if (width !== undefined) return plan(width - 2 * MARGIN, width);
  let plot = autoPlotWidth(ordered, t0, t1, title);
  let result = plan(plot, Math.ceil(plot + 2 * MARGIN));
  // Wider until every label fits beside its marks (none below them), up to the most the width may be.
  while (plot < MAX_PLOT && result.rows.some((row) => row.label.placement === 'below')) {
    plot = Math.min(MAX_PLOT, plot * 1.2);
    result = plan(plot, Math.ceil(plot + 2 * MARGIN));
  }
  return result;
}

/**
 * The plot's width when none is given: the median body `MEDIAN_BODY` px wide, so a schedule much
 * longer than its calls (many in sequence, or one slow among quick ones) is wider and a short one is
 * not stretched; at least `MIN_PLOT` (and room for the widest label and the heading), at most `MAX_PLOT`.
 */
export function autoPlotWidth(calls: readonly TimelineCall[], t0: number, t1: number, title: string): number {
  const bodies = calls.flatMap((c) => c.attempts.map((a) => a.to - a.from)).filter((d) => d > 0).sort((a, b) => a - b);
  const median = bodies[Math.floor(bodies.length / 2)];
  const byTime = median === undefined || !(t1 > t0) ? 0 : ((t1 - t0) / median) * MEDIAN_BODY;
  const widestLabel = Math.max(0, ...calls.map((c) => textCells(labelText(c)) * CELL + 8));
  const heading = title.length * HEADING_CHAR + 24 - 2 * MARGIN;
  return Math.min(MAX_PLOT, Math.max(MIN_PLOT, byTime, widestLabel, heading));
}

/** A call's label: the tool name first, then the id, then how it ended when not `ok`. */
export function labelText(call: TimelineCall): string {
  const status = call.code !== undefined && call.code !== call.status ? `${call.status} (${call.code})` : call.status;
  return `${call.name} ${call.id}${call.status === 'ok' ? '' : ` · ${status}`}`;
}

function rowsAt(calls: readonly TimelineCall[], t0: number, t1: number, plotWidth: number, width: number, plotTop: number): TimelinePlan {
  const span = Math.max(t1 - t0, 1e-6);
  const x = (t: number) => MARGIN + ((t - t0) / span) * plotWidth;
  const rows: RowPlan[] = [];
  let y = plotTop;
  for (const call of calls) {
    const barTop = y + BAR_TOP;
    const started = call.attempts.length > 0;
    // A call that never started is marked where it was answered: a denied call may wait there a long
    // time behind an earlier barrier, and a long bar in its colour would read as a body that ran.
    const spans = started ? call.attempts : [{ from: call.finishedAt, to: call.finishedAt }];
    const marks = spans.map((s): MarkPlan => {
      const from = x(s.from);
      return { part: started ? 'body' : 'outcome', from: s.from, to: s.to, box: { x: from, y: barTop, width: Math.max(x(s.to) - from, started ? MIN_BODY : MIN_OUTCOME), height: BAR } };
    });
    const waits = call.waits.map((w) => ({ kind: w.kind, box: { x: x(w.from), y: barTop + (BAR - WAIT) / 2, width: Math.max(x(w.to) - x(w.from), 1), height: WAIT } }));
    const commitX = x(call.committedAt);
    const commit = { x: commitX, box: { x: commitX - 1, y: barTop - 2, width: 2, height: BAR + 4 } };
    const boxes = [...marks.map((m) => m.box), ...waits.map((w) => w.box), commit.box];
    const extent = { left: Math.min(...boxes.map((b) => b.x)), right: Math.max(...boxes.map((b) => b.x + b.width)) };
    const label = placeLabel(labelText(call), marks.filter((m) => m.part === 'body').map((m) => m.box), extent, width, barTop);
    const height = label.placement === 'below' ? ROW + label.lines.length * LINE : ROW;
    rows.push({ call, band: { x: 0, y, width, height }, marks, waits, commit, label });
    y += height;
  }
  return { width, height: y + AXIS, t0, t1, x, plotLeft: MARGIN, plotRight: MARGIN + plotWidth, plotTop, plotBottom: y, rows };
}
