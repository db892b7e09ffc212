import { describe, expect, it } from 'vitest';
import { ReorderWindow } from '../../src/stream/reorderWindow.js';

// The window alone: the reorder's side hands it items, the pool's side tells it what it answered and
// asks whether a call may start. `out` plays the reorder: what it gives out, in order.

const item = (index: number) => ({ index });

function reorder(window: ReorderWindow<{ index: number }>, out: number[], index: number): void {
  for (let next = window.take(item(index)); next !== undefined; next = window.following()) out.push(next.index);
  window.arrived();
}

describe('ReorderWindow', () => {
  it('gives items out in index order, keeping those that come early', () => {
    const window = new ReorderWindow<{ index: number }>();
    const out: number[] = [];
    for (const index of [2, 0, 3, 1, 4]) reorder(window, out, index);
    expect(out).toEqual([0, 1, 2, 3, 4]);
    expect(window.gap()).toBeUndefined();
  });

  it('says what a clean end finds kept: the index that never arrived', () => {
    const window = new ReorderWindow<{ index: number }>();
    reorder(window, [], 0);
    reorder(window, [], 2);
    reorder(window, [], 3);
    expect(window.gap()).toEqual({ missing: 1, kept: 2 });
  });

  it('lets calls start while fewer than maxPending results wait behind the straggler; then only the straggler', () => {
    const window = new ReorderWindow<{ index: number }>(2);
    const out: number[] = [];
    for (const index of [1, 2]) {
      window.answered(index);
      reorder(window, out, index);
    }
    expect(out).toEqual([]); // 1 and 2 wait behind 0
    expect(window.mayStart(3, false)).toBe(false);
    expect(window.mayStart(0, false)).toBe(true); // the straggler
    window.answered(0);
    reorder(window, out, 0);
    expect(out).toEqual([0, 1, 2]);
    expect(window.mayStart(3, false)).toBe(true);
  });

  it("counts a result on its way from the pool as waiting, but the straggler's own", () => {
    const window = new ReorderWindow<{ index: number }>(1);
    window.answered(1); // on its way, behind 0
    expect(window.mayStart(2, false)).toBe(false);
    window.answered(0); // the straggler's own result, on its way too: 1 still waits behind it
    expect(window.mayStart(2, false)).toBe(false);
    const out: number[] = [];
    reorder(window, out, 1);
    expect(window.mayStart(2, false)).toBe(false);
    reorder(window, out, 0);
    expect(out).toEqual([0, 1]);
    expect(window.mayStart(2, false)).toBe(true);
  });

  it("the straggler's own result on its way waits behind nothing", () => {
    const window = new ReorderWindow<{ index: number }>(1);
    window.answered(0);
    expect(window.mayStart(1, false)).toBe(true);
  });

  it('lets any call start when nothing runs, unless a result is on its way', () => {
    const window = new ReorderWindow<{ index: number }>(1);
    const out: number[] = [];
    window.answered(2);
    expect(window.mayStart(3, true)).toBe(false); // 2 is on its way: it will arrive by itself
    reorder(window, out, 2);
    expect(window.mayStart(3, true)).toBe(true); // only the kept 2 waits: starting is the only way on
    expect(window.mayStart(3, false)).toBe(false);
  });

  it('wakes the pool when an item arrives after it said no, once', () => {
    const window = new ReorderWindow<{ index: number }>(1);
    let woken = 0;
    window.wakes(() => woken++);
    const out: number[] = [];
    window.answered(1);
    reorder(window, out, 1);
    expect(woken).toBe(0); // nobody was held back
    expect(window.mayStart(2, false)).toBe(false);
    window.answered(0);
    reorder(window, out, 0);
    expect(woken).toBe(1);
    window.answered(3);
    reorder(window, out, 3); // not held back since: no wake
    expect(woken).toBe(1);
  });

  it('its pull limit is maxPending + concurrency', () => {
    expect(ReorderWindow.pullLimit(5, 4)).toBe(9);
  });
});
