import type { TimelineStatus, TimelineWaitKind } from './model.js';
import { CELL, STATUS_COLORS, WAIT_STYLES } from './styles.js';
import { element, escapeXml } from './svgText.js';
import { round } from './axis.js';

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

/** The legend for a picture `width` px wide: its items in as many rows as they need, and how many. */
export function legend(width: number): { readonly svg: string; readonly rows: number } {
  const out: string[] = [];
  let x = 12;
  let row = 0;
  for (const item of LEGEND) {
    const textWidth = item.text.length * CELL;
    const itemWidth = 22 + textWidth + 14;
    if (x + itemWidth > width - 12 && x > 12) {
      row++;
      x = 12;
    }
    const y = 28 + row * 20;
    if ('status' in item) out.push(element('rect', { 'data-legend': item.status, x: round(x), y, width: 16, height: 10, rx: 2, fill: STATUS_COLORS[item.status] }));
    else if ('wait' in item) out.push(element('rect', { 'data-legend': item.wait, x: round(x), y: y + 3, width: 16, height: 4, fill: WAIT_STYLES[item.wait].fill }));
    else if (item.mark === 'exclusive') out.push(element('rect', { 'data-legend': 'exclusive', x: round(x + 1), y: y + 1, width: 14, height: 8, rx: 2, fill: '#dee2e6', stroke: '#212529', 'stroke-width': 2 }));
    else out.push(element('rect', { 'data-legend': 'commit', x: round(x + 7), y: y - 2, width: 2, height: 14, fill: '#212529' }));
    out.push(element('text', { 'data-legend-text': '', x: round(x + 22), y: y + 9, textLength: round(textWidth), lengthAdjust: 'spacingAndGlyphs', fill: '#343a40' }, escapeXml(item.text)));
    x += itemWidth;
  }
  return { svg: out.join('\n'), rows: row + 1 };
}
