import { axisTicks, round } from './axis.js';
import type { PlacedCall, TimelineLayout } from './layout.js';
import type { TimelineStatus, TimelineWaitKind } from './model.js';
import { element, escapeXml, shorten } from './svgText.js';
import { CHAR_WIDTH, FONT, HATCH, STATUS_COLORS, WAIT_STYLES } from './styles.js';

const LEFT = 96; // room for the lane labels
const RIGHT = 24;
const BAR = 20; // a body's height
const WAIT = 6; // a wait row's height (a 4px strip and a gap)
const PAD = 6; // above and below each lane's content
const NEVER_ROW = 22; // a sub-row of the not-started row
const AXIS = 30;

interface Geometry {
  readonly x: (t: number) => number;
  /** The top of each lane, and of the not-started row (last). */
  readonly laneTop: readonly number[];
  readonly plotTop: number;
  readonly plotBottom: number;
}

/** The SVG of a laid-out timeline; `width` in px, `title` for the `<title>` and the heading. */
export function drawTimeline(layout: TimelineLayout, width: number, title: string): string {
  const legend = legendItems(width);
  const plotTop = 34 + legend.rows * 20;
  const laneTop: number[] = [];
  let y = plotTop;
  for (let lane = 0; lane < layout.lanes; lane++) {
    laneTop.push(y);
    y += PAD + layout.waitRows[lane]! * WAIT + BAR + PAD;
  }
  laneTop.push(y);
  if (layout.notStarted) y += PAD + layout.waitRows[layout.lanes]! * NEVER_ROW + PAD;
  const plotBottom = y;
  const span = Math.max(layout.t1 - layout.t0, 1e-6);
  const plotWidth = width - LEFT - RIGHT;
  const g: Geometry = { x: (t) => LEFT + ((t - layout.t0) / span) * plotWidth, laneTop, plotTop, plotBottom };
  const height = plotBottom + AXIS;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${round(height)}" viewBox="0 0 ${width} ${round(height)}" font-family="${escapeXml(FONT)}" font-size="11" role="img">`,
    element('title', {}, escapeXml(title)),
    `<defs>${HATCH}</defs>`,
    element('rect', { width, height: round(height), fill: '#ffffff' }),
    element('text', { x: 12, y: 18, 'font-size': 13, 'font-weight': 600, fill: '#212529' }, escapeXml(title)),
    legend.svg,
  ];
  parts.push(...lanes(layout, g, width));
  for (const placed of layout.placed) if (placed.call.exclusive && placed.lane >= 0) parts.push(exclusiveBand(placed, g));
  const next = nextOnRow(layout);
  for (const placed of layout.placed) parts.push(callGroup(placed, layout, g, g.x(next.get(placed) ?? layout.t1) + (next.has(placed) ? 0 : RIGHT)));
  parts.push(axis(layout, g, width));
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function lanes(layout: TimelineLayout, g: Geometry, width: number): string[] {
  const rows: string[] = [];
  const count = layout.lanes + (layout.notStarted ? 1 : 0);
  for (let lane = 0; lane < count; lane++) {
    const top = g.laneTop[lane]!;
    const bottom = lane + 1 < g.laneTop.length ? g.laneTop[lane + 1]! : g.plotBottom;
    const label = lane < layout.lanes ? `slot ${lane + 1}` : 'never started';
    rows.push(element('rect', { x: 0, y: round(top), width, height: round(bottom - top), fill: lane % 2 === 0 ? '#f8f9fa' : '#f1f3f5' }));
    rows.push(element('text', { x: 12, y: round(bottom - PAD - 6), fill: '#495057' }, label));
  }
  return rows;
}

function exclusiveBand({ call }: PlacedCall, g: Geometry): string {
  const from = g.x(call.attempts[0]!.from);
  const to = g.x(call.attempts[call.attempts.length - 1]!.to);
  return element('rect', {
    'data-exclusive-band': call.id,
    x: round(from),
    y: round(g.plotTop),
    width: round(Math.max(to - from, 1)),
    height: round(g.laneTop[g.laneTop.length - 1]! - g.plotTop),
    fill: '#212529',
    'fill-opacity': 0.08,
  });
}

/** When the next call on the same row starts: a label outside its bar must end before it. */
function nextOnRow(layout: TimelineLayout): Map<PlacedCall, number> {
  const from = (p: PlacedCall) => p.call.attempts[0]?.from ?? p.call.receivedAt;
  const rows = new Map<string, PlacedCall[]>();
  for (const p of layout.placed) {
    const key = p.lane >= 0 ? `${p.lane}` : `never ${p.waitRow}`;
    rows.set(key, [...(rows.get(key) ?? []), p]);
  }
  const next = new Map<PlacedCall, number>();
  for (const row of rows.values()) {
    row.sort((a, b) => from(a) - from(b) || a.call.index - b.call.index);
    row.forEach((p, i) => i + 1 < row.length && next.set(p, from(row[i + 1]!)));
  }
  return next;
}

function callGroup({ call, lane, waitRow }: PlacedCall, layout: TimelineLayout, g: Geometry, roomUntil: number): string {
  const t = (time: number) => round(time - layout.t0);
  const started = lane >= 0;
  const top = started ? g.laneTop[lane]! + PAD : g.laneTop[layout.lanes]! + PAD + waitRow * NEVER_ROW;
  const barTop = started ? top + layout.waitRows[lane]! * WAIT : top + 6;
  const barHeight = started ? BAR : 14;
  const waitTop = started ? top + waitRow * WAIT : top;
  const status = call.code !== undefined && call.code !== call.status ? `${call.status} (${call.code})` : call.status;
  const out: string[] = [`<g data-call="${escapeXml(call.id)}">`];
  const tries = call.attemptCount > 1 ? ` (${call.attemptCount} attempts)` : '';
  const when = (call.attempts.map((a) => `${t(a.from)}–${t(a.to)} ms`).join(', ') || 'never started') + tries;
  out.push(element('title', {}, escapeXml(`${call.id} ${call.name}${call.exclusive ? ' (exclusive)' : ''}: ${status}, ${when}; result #${call.index} at ${t(call.committedAt)} ms`)));
  for (const wait of call.waits) {
    out.push(element('rect', { 'data-wait': wait.kind, 'data-call-id': call.id, x: round(g.x(wait.from)), y: round(waitTop), width: round(Math.max(g.x(wait.to) - g.x(wait.from), 1)), height: 4, fill: WAIT_STYLES[wait.kind].fill }));
  }
  // The body, one segment per attempt; a call that never started gets a short mark where it was answered.
  const segments = started ? call.attempts : [{ from: Math.max(call.receivedAt, ...call.waits.map((w) => w.to)), to: call.finishedAt }];
  segments.forEach((segment, attempt) => {
    const x = g.x(segment.from);
    const w = Math.max(g.x(segment.to) - x, started ? 2 : 4);
    out.push(
      element('rect', {
        'data-call-id': call.id,
        'data-part': started ? 'body' : 'outcome',
        'data-attempt': attempt,
        'data-status': call.status,
        'data-start': t(segment.from),
        'data-end': t(segment.to),
        x: round(x),
        y: round(barTop),
        width: round(w),
        height: barHeight,
        rx: 2,
        fill: STATUS_COLORS[call.status],
        ...(call.exclusive ? { stroke: '#212529', 'stroke-width': 2 } : {}),
      }),
    );
  });
  const last = segments[segments.length - 1]!;
  const barStart = g.x(segments[0]!.from);
  const barEnd = Math.max(g.x(last.to), barStart + (started ? 2 : 4));
  out.push(label(call.exclusive ? `${call.id} ${call.name} (exclusive)` : `${call.id} ${call.name}`, barStart, barEnd, roomUntil, barTop, barHeight));
  const commit = g.x(call.committedAt);
  if (commit > barEnd + 1) {
    out.push(element('line', { x1: round(barEnd), y1: round(barTop + barHeight - 1), x2: round(commit), y2: round(barTop + barHeight - 1), stroke: '#495057', 'stroke-dasharray': '2 2' })); // along the bottom, under any label
  }
  out.push(element('rect', { 'data-commit-for': call.id, 'data-at': t(call.committedAt), x: round(commit - 1), y: round(barTop - 2), width: 2, height: barHeight + 4, fill: '#212529' }));
  out.push('</g>');
  return out.join('');
}

/**
 * The label inside the bar when it fits (white), else after it (dark) up to `limit`, where the next bar
 * of the row starts, shortened with `…`; none when even that has no room (the `<title>` still has it).
 */
function label(text: string, from: number, to: number, limit: number, top: number, height: number): string {
  const inside = Math.floor((to - from - 8) / CHAR_WIDTH);
  const baseline = round(top + height / 2 + 4);
  if (inside >= Math.min(text.length, 6)) {
    return element('text', { x: round(from + 4), y: baseline, fill: '#ffffff', 'pointer-events': 'none' }, escapeXml(shorten(text, inside)));
  }
  const outside = Math.floor((limit - to - 10) / CHAR_WIDTH);
  if (outside < 4) return '';
  return element('text', { x: round(to + 6), y: baseline, fill: '#212529' }, escapeXml(shorten(text, outside)));
}

function axis(layout: TimelineLayout, g: Geometry, width: number): string {
  const y = g.plotBottom;
  const out = [element('line', { x1: LEFT, y1: y, x2: width - RIGHT, y2: y, stroke: '#495057' })];
  for (const tick of axisTicks(layout.t1 - layout.t0)) {
    const x = round(g.x(layout.t0 + tick.at));
    out.push(element('line', { x1: x, y1: round(g.plotTop), x2: x, y2: y + 4, stroke: '#adb5bd', 'stroke-opacity': 0.35 }));
    out.push(element('text', { x, y: y + 16, 'text-anchor': 'middle', fill: '#495057' }, tick.label));
  }
  return out.join('\n');
}

type LegendItem = { readonly text: string } & (
  | { readonly status: TimelineStatus }
  | { readonly wait: TimelineWaitKind }
  | { readonly mark: 'exclusive' | 'commit' }
);

const LEGEND: readonly LegendItem[] = [
  ...(Object.keys(STATUS_COLORS) as TimelineStatus[]).map((status) => ({ status, text: status })),
  ...(Object.keys(WAIT_STYLES) as TimelineWaitKind[]).map((wait) => ({ wait, text: WAIT_STYLES[wait].label })),
  { mark: 'exclusive', text: 'exclusive (runs alone)' },
  { mark: 'commit', text: 'result given out (model order)' },
];

function legendItems(width: number): { readonly svg: string; readonly rows: number } {
  const out: string[] = [];
  let x = 12;
  let row = 0;
  for (const item of LEGEND) {
    const itemWidth = 22 + item.text.length * CHAR_WIDTH + 14;
    if (x + itemWidth > width - 12 && x > 12) {
      row++;
      x = 12;
    }
    const y = 28 + row * 20;
    if ('status' in item) out.push(element('rect', { 'data-legend': item.status, x, y, width: 16, height: 10, rx: 2, fill: STATUS_COLORS[item.status] }));
    else if ('wait' in item) out.push(element('rect', { 'data-legend': item.wait, x, y: y + 3, width: 16, height: 4, fill: WAIT_STYLES[item.wait].fill }));
    else if (item.mark === 'exclusive') out.push(element('rect', { 'data-legend': 'exclusive', x: x + 1, y: y + 1, width: 14, height: 8, rx: 2, fill: '#dee2e6', stroke: '#212529', 'stroke-width': 2 }));
    else out.push(element('rect', { 'data-legend': 'commit', x: x + 7, y: y - 2, width: 2, height: 14, fill: '#212529' }));
    out.push(element('text', { x: x + 22, y: y + 9, fill: '#343a40' }, escapeXml(item.text)));
    x += itemWidth;
  }
  return { svg: out.join('\n'), rows: row + 1 };
}
