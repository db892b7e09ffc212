import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labelText, MARGIN, MAX_PLOT, MIN_PLOT, planTimeline, type Box, type TimelinePlan } from '../../src/observe/timeline/layout.js';
import type { TimelineCall } from '../../src/observe/timeline/model.js';
import { CELL } from '../../src/observe/timeline/styles.js';
import { textCells, wrapText } from '../../src/observe/timeline/svgText.js';
import { anyCall, call } from './timelineCalls.js';

// The layout of the picture, checked on its geometry: every call has a row and a whole label that lies
// within the picture and overlaps no other label and no mark (but its own bar, when it sits inside it).

const TOP = 60;
const plan = (calls: readonly TimelineCall[], width?: number, title = 'a schedule') => planTimeline(calls, width, () => TOP, title);

const within = (inner: Box, outer: Box, slack = 0.01) =>
  inner.x >= outer.x - slack && inner.y >= outer.y - slack && inner.x + inner.width <= outer.x + outer.width + slack && inner.y + inner.height <= outer.y + outer.height + slack;
const overlap = (a: Box, b: Box) => a.x < b.x + b.width - 0.01 && b.x < a.x + a.width - 0.01 && a.y < b.y + b.height - 0.01 && b.y < a.y + a.height - 0.01;

/** Every invariant the picture keeps, whatever the schedule. */
function expectReadable(calls: readonly TimelineCall[], p: TimelinePlan) {
  const picture = { x: 0, y: 0, width: p.width, height: p.height };
  expect(p.rows.map((r) => r.call).sort((a, b) => a.id.localeCompare(b.id))).toEqual([...calls].sort((a, b) => a.id.localeCompare(b.id)));
  p.rows.forEach((row, i) => {
    if (i > 0) expect(row.band.y).toBeCloseTo(p.rows[i - 1]!.band.y + p.rows[i - 1]!.band.height, 6);
    expect(row.marks.length).toBeGreaterThan(0);
    for (const mark of row.marks) {
      expect(mark.box.width).toBeGreaterThanOrEqual(mark.part === 'outcome' ? 6 : 2);
      expect(within(mark.box, row.band)).toBe(true);
      expect(within(mark.box, picture)).toBe(true);
    }
    const { label } = row;
    // Whole: its lines are the full text, the tool name first; each line as wide as its cells.
    expect(label.lines.map((l) => l.text).join('')).toBe(labelText(row.call));
    expect(labelText(row.call).startsWith(`${row.call.name} ${row.call.id}`)).toBe(true);
    for (const line of label.lines) {
      expect(line.width).toBeCloseTo(textCells(line.text) * CELL, 6);
      expect(within({ x: line.x, y: line.y - 10, width: line.width, height: 13 }, label.box)).toBe(true);
    }
    expect(within(label.box, row.band)).toBe(true);
    expect(within(label.box, picture)).toBe(true);
  });
  const marks = p.rows.flatMap((row) => [...row.marks.map((m) => ({ row, box: m.box, body: m.part === 'body' })), ...row.waits.map((w) => ({ row, box: w.box, body: false })), { row, box: row.commit.box, body: false }]);
  for (const row of p.rows) {
    for (const other of p.rows) if (other !== row) expect(overlap(row.label.box, other.label.box)).toBe(false);
    for (const mark of marks) {
      if (row.label.placement === 'inside' && mark.row === row && mark.body && within(row.label.box, mark.box)) continue;
      expect(overlap(row.label.box, mark.box), `${row.call.id}'s label over a mark of ${mark.row.call.id}`).toBe(false);
    }
  }
}

describe('the timeline layout', () => {
  it('any schedule: every call has a row and a whole label, within the picture, over no other label and no mark', () => {
    fc.assert(
      fc.property(fc.array(anyCall, { maxLength: 25 }), fc.option(fc.integer({ min: 320, max: 3000 }), { nil: undefined }), (given, width) => {
        const calls = given.map((c, i) => call(`c${i}`, c.name, { ...c, index: i }));
        const p = plan(calls, width);
        if (width !== undefined) expect(p.width).toBe(width);
        else {
          expect(p.width).toBeGreaterThanOrEqual(MIN_PLOT + 2 * MARGIN);
          expect(p.width).toBeLessThanOrEqual(Math.ceil(MAX_PLOT + 2 * MARGIN));
        }
        expectReadable(calls, p);
      }),
      { numRuns: 300 },
    );
  });

  it('puts a label in its bar when it fits, after its marks when not, before them at the right edge, below when neither', () => {
    const long = call('toolu_1', 'read_file', { received: 0, attempts: [[0, 1000]] });
    const short = call('toolu_2', 'list_dir', { received: 0, attempts: [[0, 10]] });
    const late = call('toolu_3', 'search', { received: 990, attempts: [[0, 10]] });
    const wide = call('toolu_4', 'x'.repeat(200), { received: 500, attempts: [[0, 10]] });
    const p = plan([long, short, late, wide], 700);
    const placement = (id: string) => p.rows.find((r) => r.call.id === id)!.label.placement;
    expect([placement('toolu_1'), placement('toolu_2'), placement('toolu_3'), placement('toolu_4')]).toEqual(['inside', 'right', 'left', 'below']);
    const below = p.rows.find((r) => r.call.id === 'toolu_4')!;
    expect(below.label.lines.length).toBeGreaterThan(1);
    expect(below.band.height).toBeGreaterThan(p.rows[0]!.band.height);
    expectReadable([long, short, late, wide], p);
  });

  it('gives a call denied after an approval wait its own row, a visible mark after the wait, and a label saying so', () => {
    const read = call('toolu_demo_02', 'read_file', { received: 0, attempts: [[0, 250]] });
    const write = call('toolu_demo_04', 'write_file', { received: 20, waits: [['approval', 4000]], status: 'denied', code: 'approval_rejected', exclusive: true });
    const p = plan([read, write]);
    const row = p.rows.find((r) => r.call === write)!;
    expect(row.marks).toHaveLength(1);
    expect(row.marks[0]!.part).toBe('outcome');
    expect(row.marks[0]!.box.width).toBeGreaterThanOrEqual(6);
    expect(row.marks[0]!.box.x).toBeGreaterThanOrEqual(row.waits[0]!.box.x + row.waits[0]!.box.width - 0.01);
    expect(row.label.text).toBe('write_file toolu_demo_04 · denied (approval_rejected)');
    expect(row.band.y).toBeGreaterThan(p.rows[0]!.band.y);
    expectReadable([read, write], p);
  });

  it('follows the schedule: a short one is not stretched, a long one (many calls one after another) is wider', () => {
    const parallel = [0, 1, 2].map((i) => call(`p${i}`, 'read', { received: i, attempts: [[0, 100]] }));
    const sequence = Array.from({ length: 30 }, (_, i) => call(`s${i}`, 'read', { received: i * 100, attempts: [[0, 100]] }));
    const short = plan(parallel);
    const long = plan(sequence);
    expect(short.width).toBe(MIN_PLOT + 2 * MARGIN);
    expect(long.width).toBeGreaterThan(short.width * 2);
    expect(long.width).toBeLessThanOrEqual(Math.ceil(MAX_PLOT + 2 * MARGIN));
    // A short schedule whose labels do not fit beside their bars at the least width grows until they do.
    const crowded = [0, 1].map((i) => call(`toolu_${'9'.repeat(20)}_${i}`, 'a_tool_with_a_long_name', { received: i, waits: [['queue', 50 * i]], attempts: [[0, 100 - 50 * i]], commitAfter: 50 * (1 - i) }));
    const grown = plan(crowded);
    expect(grown.rows.every((r) => r.label.placement !== 'below')).toBe(true);
    expectReadable(crowded, grown);
  });

  it('keeps rows in order of arrival', () => {
    const calls = [call('b', 'read', { received: 50, attempts: [[0, 10]] }), call('a', 'read', { received: 10, attempts: [[0, 10]] })];
    expect(plan(calls).rows.map((r) => r.call.id)).toEqual(['a', 'b']);
  });
});

describe('wrapText', () => {
  it('wraps the whole text, in order, no line over the room, never between the halves of a pair', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.integer({ min: 2, max: 20 }), (text, cells) => {
        const lines = wrapText(text, cells);
        expect(lines.join('')).toBe(text);
        for (const line of lines) {
          expect(textCells(line)).toBeLessThanOrEqual(cells);
          expect(/^[\uDC00-\uDFFF]/.test(line) && lines.indexOf(line) > 0 && /[\uD800-\uDBFF]$/.test(lines[lines.indexOf(line) - 1]!)).toBe(false);
        }
      }),
    );
  });
});
