import type { Box } from './model.js';
import { CELL } from './styles.js';
import { textCells, wrapText } from './svgText.js';

/** Where a label went: in its body, after or before its row's marks, or on lines of its own below them. */
export type LabelPlacement = 'inside' | 'right' | 'left' | 'below';

/** A call's label, whole: one line beside or in its bar, or as many lines below it as it needs. */
export interface LabelPlan {
  readonly text: string;
  readonly placement: LabelPlacement;
  /** Each line: where its text starts (`x`, the baseline `y`), and its width in px (its `textLength`). */
  readonly lines: readonly { readonly text: string; readonly x: number; readonly y: number; readonly width: number }[];
  /** The box the text takes, all lines together. */
  readonly box: Box;
}

const GAP = 6; // between a label and the marks it is beside
const INSET = 4; // between a label and the ends of the bar it is in
const EDGE = 4; // between a label and the picture's sides
const ASCENT = 10; // an 11px font's text box above its baseline
const DESCENT = 3; // and below it
const BASELINE = 12; // from a bar's top
const LINE = 15; // a line below the bar

/**
 * Places a label so it is drawn whole and over nothing but its own bar: inside the widest of its
 * bodies when it fits there (white on the fill); else after its row's last mark (the commit tick);
 * else before its first (the earliest wait); else below them, on as many lines as its text needs
 * (wrapped, never cut), starting under its marks as far as the picture's width allows. A row is the
 * label's own, so no label can overlap another's.
 */
export function placeLabel(text: string, bodies: readonly Box[], extent: { readonly left: number; readonly right: number }, width: number, barTop: number): LabelPlan {
  const textWidth = textCells(text) * CELL;
  const y = barTop + BASELINE;
  const one = (placement: LabelPlacement, x: number): LabelPlan => ({
    text,
    placement,
    lines: [{ text, x, y, width: textWidth }],
    box: { x, y: y - ASCENT, width: textWidth, height: ASCENT + DESCENT },
  });
  const widest = bodies.reduce<Box | undefined>((a, b) => (a === undefined || b.width > a.width ? b : a), undefined);
  if (widest !== undefined && widest.width >= textWidth + 2 * INSET) return one('inside', widest.x + INSET);
  if (extent.right + GAP + textWidth <= width - EDGE) return one('right', extent.right + GAP);
  if (extent.left - GAP - textWidth >= EDGE) return one('left', extent.left - GAP - textWidth);
  const room = width - 2 * EDGE;
  const lines = wrapText(text, Math.max(1, Math.floor(room / CELL)));
  const widths = lines.map((line) => textCells(line) * CELL);
  const widestLine = Math.max(...widths);
  const x = Math.max(EDGE, Math.min(extent.left, width - EDGE - widestLine));
  const first = barTop + 16 + BASELINE + 2; // below the bar (16 px), then a line's baseline
  return {
    text,
    placement: 'below',
    lines: lines.map((line, i) => ({ text: line, x, y: first + i * LINE, width: widths[i]! })),
    box: { x, y: first - ASCENT, width: widestLine, height: (lines.length - 1) * LINE + ASCENT + DESCENT },
  };
}
