import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderTimeline, type ToolResult } from '../../src/index.js';
import { STATUS_COLORS } from '../../src/observe/timeline/styles.js';
import { chromiumAvailable, CHROMIUM_MISSING, launchChromium, requireChromium } from '../support/chromium.js';
import { stretched } from '../support/timing.js';
import { scheduleScenario } from './timelineScenario.js';

requireChromium();

const rgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

// The picture as a user sees it: the SVG file opened in Debian's Chromium, its bars measured by the
// browser's layout and their colours read back from a screenshot (decoded by the browser's own PNG decoder).
describe.skipIf(!chromiumAvailable())(`renderTimeline in a real browser${chromiumAvailable() ? '' : ` (${CHROMIUM_MISSING})`}`, () => {
  let browser: Browser;
  let dir: string;
  beforeAll(async () => {
    browser = await launchChromium();
    dir = mkdtempSync(join(tmpdir(), 'toolstream-timeline-'));
  });
  afterAll(async () => {
    await browser?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('shows every call’s bar, visible, where its timing says and in its status colour', async () => {
    const { results, tools } = await scheduleScenario();
    const file = join(dir, 'timeline.svg');
    writeFileSync(file, renderTimeline(results, { tools }));
    const page = await browser.newPage({ viewport: { width: 1000, height: 400 }, deviceScaleFactor: 1 });
    await page.goto(pathToFileURL(file).href);
    const t0 = Math.min(...results.map((r) => r.timing.receivedAt));

    const measured: { result: ToolResult; box: { x: number; y: number; width: number; height: number } }[] = [];
    for (const result of results) {
      const bar = page.locator(`[data-call-id="${result.id}"][data-part]`);
      expect(await bar.count(), result.id).toBe(1);
      await expect.poll(() => bar.isVisible(), { timeout: stretched(2000) }).toBe(true);
      const box = (await bar.boundingBox())!;
      expect(box.width, result.id).toBeGreaterThan(1);
      measured.push({ result, box });
    }
    // x is linear in time: fit it on the earliest start and the latest end, then check every bar's ends.
    const bodies = measured.filter((m) => m.result.started);
    const first = bodies.reduce((a, b) => (a.result.timing.startedAt! < b.result.timing.startedAt! ? a : b));
    const last = bodies.reduce((a, b) => (a.result.timing.endedAt! > b.result.timing.endedAt! ? a : b));
    const pxPerMs = (last.box.x + last.box.width - first.box.x) / (last.result.timing.endedAt! - first.result.timing.startedAt!);
    expect(pxPerMs).toBeGreaterThan(0);
    const xAt = (t: number) => first.box.x + (t - first.result.timing.startedAt!) * pxPerMs;
    for (const { result, box } of bodies) {
      expect(Math.abs(box.x - xAt(result.timing.startedAt!)), `${result.id} start`).toBeLessThan(1.5);
      expect(Math.abs(box.x + Math.max(box.width, 2) - xAt(Math.max(result.timing.endedAt!, result.timing.startedAt! + 2 / pxPerMs))), `${result.id} end`).toBeLessThan(1.5);
    }
    // The call that never started sits below every lane, from its arrival to its result.
    const denied = measured.find((m) => !m.result.started)!;
    expect(denied.box.y).toBeGreaterThan(Math.max(...bodies.map((b) => b.box.y + b.box.height)));
    expect(Math.abs(denied.box.x - xAt(denied.result.timing.receivedAt + denied.result.timing.durations.intake))).toBeLessThan(1.5);
    expect(t0).toBeLessThanOrEqual(first.result.timing.startedAt!);

    // Colours, read from the screenshot along a row near the bottom of each bar (below its label's
    // glyphs): the colour most of the row has, so a one-pixel line across the bar cannot stand for its
    // fill. (A CI run sampled the bar's middle exactly where a time-axis grid line, #adb5bd at 0.35
    // opacity, crossed it: rgb(90,166,110) is #2f9e44 under that line. Where lines fall moves with timing.)
    const png = (await page.screenshot()).toString('base64');
    const ROW = 9;
    const points = measured.flatMap(({ box }) =>
      Array.from({ length: ROW }, (_, k) => [Math.round(box.x + 1 + ((box.width - 2) * (k + 0.5)) / ROW), Math.round(box.y + box.height - 3)] as const),
    );
    const blank = await browser.newPage();
    const pixels = await blank.evaluate(
      async ({ png, points }) => {
        const image = new Image();
        image.src = `data:image/png;base64,${png}`;
        await image.decode();
        const canvas = document.createElement('canvas');
        canvas.width = image.width;
        canvas.height = image.height;
        const context = canvas.getContext('2d')!;
        context.drawImage(image, 0, 0);
        return points.map(([x, y]) => [...context.getImageData(x, y, 1, 1).data.slice(0, 3)]);
      },
      { png, points },
    );
    /** The most frequent colour of a bar's row. */
    const fillOf = (i: number): number[] => {
      const row = pixels.slice(i * ROW, (i + 1) * ROW).map((p) => p.join(','));
      const counts = new Map<string, number>();
      for (const p of row) counts.set(p, (counts.get(p) ?? 0) + 1);
      return [...counts].reduce((a, b) => (b[1] > a[1] ? b : a))[0].split(',').map(Number);
    };
    measured.forEach(({ result }, i) => {
      const status = result.status === 'error' && result.error.code === 'timeout' ? 'timeout' : result.status;
      const want = rgb(STATUS_COLORS[status]);
      const got = fillOf(i);
      expect(Math.max(...want.map((c, k) => Math.abs(c - got[k]!))), `${result.id}: ${status} ${STATUS_COLORS[status]} vs rgb(${got.join(',')})`).toBeLessThan(12);
    });
    await blank.close();
    await page.close();
  });
});
