import { axisTicks, round } from './axis.js';
import { legend } from './legend.js';
import { planTimeline, type RowPlan, type TimelinePlan } from './layout.js';
import type { TimelineCall } from './model.js';
import { element, escapeXml } from './svgText.js';
import { CELL, FONT, HATCH, HEADING_SIZE, MONO, STATUS_COLORS, WAIT_STYLES } from './styles.js';

/** The SVG of the calls' schedule; `width` in px (or following the schedule), `title` for the `<title>` and the heading. */
export function drawTimeline(calls: readonly TimelineCall[], width: number | undefined, title: string): string {
  const plan = planTimeline(calls, width, (w) => 34 + legend(w).rows * 20, title);
  const key = legend(plan.width);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${plan.width}" height="${round(plan.height)}" viewBox="0 0 ${plan.width} ${round(plan.height)}" font-family="${escapeXml(MONO)}" font-size="11" role="img">`,
    element('title', {}, escapeXml(title)),
    `<defs>${HATCH}</defs>`,
    element('rect', { width: plan.width, height: round(plan.height), fill: '#ffffff' }),
    element('text', { x: 12, y: 18, 'font-family': FONT, 'font-size': HEADING_SIZE, 'font-weight': 600, fill: '#212529' }, escapeXml(title)),
    key.svg,
  ];
  plan.rows.forEach((row, i) => parts.push(element('rect', { x: 0, y: round(row.band.y), width: plan.width, height: round(row.band.height), fill: i % 2 === 0 ? '#f8f9fa' : '#f1f3f5' })));
  parts.push(...grid(plan));
  for (const row of plan.rows) if (row.call.exclusive && row.marks[0]?.part === 'body') parts.push(exclusiveBand(row, plan));
  for (const row of plan.rows) parts.push(callGroup(row, plan));
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function exclusiveBand({ call, marks }: RowPlan, plan: TimelinePlan): string {
  const from = marks[0]!.box.x;
  const last = marks[marks.length - 1]!.box;
  return element('rect', {
    'data-exclusive-band': call.id,
    x: round(from),
    y: round(plan.plotTop),
    width: round(Math.max(last.x + last.width - from, 1)),
    height: round(plan.plotBottom - plan.plotTop),
    fill: '#212529',
    'fill-opacity': 0.08,
  });
}

function callGroup(row: RowPlan, plan: TimelinePlan): string {
  const { call, marks, label } = row;
  const t = (time: number) => round(time - plan.t0);
  const status = call.code !== undefined && call.code !== call.status ? `${call.status} (${call.code})` : call.status;
  const tries = call.attemptCount > 1 ? ` (${call.attemptCount} attempts)` : '';
  const when = (call.attempts.map((a) => `${t(a.from)}–${t(a.to)} ms`).join(', ') || 'never started') + tries;
  const waited = call.waits.map((w) => `${WAIT_STYLES[w.kind].label} ${round(w.to - w.from)} ms`).join(', ');
  const out: string[] = [`<g data-call="${escapeXml(call.id)}">`];
  out.push(element('title', {}, escapeXml(`${call.name} ${call.id}${call.exclusive ? ' (exclusive)' : ''}: ${status}, ${when}${waited === '' ? '' : `; ${waited}`}; result #${call.index} at ${t(call.committedAt)} ms`)));
  for (const wait of row.waits) {
    out.push(element('rect', { 'data-wait': wait.kind, 'data-call-id': call.id, x: round(wait.box.x), y: round(wait.box.y), width: round(wait.box.width), height: wait.box.height, fill: WAIT_STYLES[wait.kind].fill }));
  }
  marks.forEach((mark, attempt) => {
    out.push(
      element('rect', {
        'data-call-id': call.id,
        'data-part': mark.part,
        'data-attempt': attempt,
        'data-status': call.status,
        'data-start': t(mark.from),
        'data-end': t(mark.to),
        x: round(mark.box.x),
        y: round(mark.box.y),
        width: round(mark.box.width),
        height: mark.box.height,
        rx: 2,
        fill: STATUS_COLORS[call.status],
        ...(call.exclusive ? { stroke: '#212529', 'stroke-width': 2 } : {}),
      }),
    );
  });
  const last = marks[marks.length - 1]!.box;
  const end = last.x + last.width;
  if (row.commit.x > end + 1) {
    const y = round(last.y + last.height / 2);
    out.push(element('line', { x1: round(end), y1: y, x2: round(row.commit.x), y2: y, stroke: '#495057', 'stroke-dasharray': '2 2' }));
  }
  const tick = row.commit.box;
  out.push(element('rect', { 'data-commit-for': call.id, 'data-at': t(call.committedAt), x: round(tick.x), y: round(tick.y), width: tick.width, height: tick.height, fill: '#212529' }));
  for (const line of label.lines) {
    out.push(
      element(
        'text',
        {
          'data-label-for': call.id,
          'data-placement': label.placement,
          x: round(line.x),
          y: round(line.y),
          textLength: round(line.width),
          lengthAdjust: 'spacingAndGlyphs',
          fill: label.placement === 'inside' ? '#ffffff' : '#212529',
          'pointer-events': 'none',
        },
        escapeXml(line.text),
      ),
    );
  }
  out.push('</g>');
  return out.join('');
}

/** The time axis under the rows, with a faint line up through them at each tick. */
function grid(plan: TimelinePlan): string[] {
  const y = plan.plotBottom;
  const out = [element('line', { x1: plan.plotLeft, y1: round(y), x2: round(plan.plotRight), y2: round(y), stroke: '#495057' })];
  for (const tick of axisTicks(plan.t1 - plan.t0, Math.max(2, Math.floor((plan.plotRight - plan.plotLeft) / 90)))) {
    const x = round(plan.x(plan.t0 + tick.at));
    out.push(element('line', { x1: x, y1: round(plan.plotTop), x2: x, y2: round(y + 4), stroke: '#adb5bd', 'stroke-opacity': 0.35 }));
    out.push(element('text', { x, y: round(y + 16), 'text-anchor': 'middle', textLength: round(tick.label.length * CELL), lengthAdjust: 'spacingAndGlyphs', fill: '#495057' }, tick.label));
  }
  return out;
}
