import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { firstValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, renderTimeline, type PrePolicy, type ToolResult } from '../../src/index.js';
import { drawTimeline } from '../../src/observe/timeline/drawTimeline.js';
import { anyCall, call } from './timelineCalls.js';
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
    const page = await browser.newPage({ viewport: { width: 2100, height: 600 }, deviceScaleFactor: 1 });
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
    // The call that never started has a row of its own (no bar beside it), its mark where it was answered.
    const denied = measured.find((m) => !m.result.started)!;
    for (const b of bodies) expect(b.box.y + b.box.height <= denied.box.y || b.box.y >= denied.box.y + denied.box.height).toBe(true);
    expect(denied.box.width).toBeGreaterThanOrEqual(6);
    expect(Math.abs(denied.box.x - xAt(denied.result.timing.finishedAt))).toBeLessThan(1.5);
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

  // Readable as a person sees it: every text measured by Chromium's own layout (its font, not ours).
  it('shows every call with a visible mark and its whole label, no text clipped or over another text or a mark: the demo\'s case', async () => {
    // The case of `npm start` at a terminal: reads run while a write waits for an approval that is
    // rejected, and a read outside the workspace is denied at once.
    const { events, tools } = await demoLikeRun();
    const svg = renderTimeline(events, { tools, title: 'npm start: the schedule of the demo' });
    const seen = await measure(svg);
    expectReadable(seen, events.filter((e) => e.type === 'result').map((e) => ({ id: e.id, label: `${e.name} ${e.id}` })));
    const write = seen.calls.find((c) => c.id === 'toolu_04')!;
    expect(write.label).toBe('write_file toolu_04 · denied (approval_rejected)');
    expect(write.waits).toContain('approval');
  });

  it('the same for any schedule: a mark and a whole label for every call, nothing clipped or overlapping', async () => {
    // Names a person reads (ASCII, CJK, emoji): what XML cannot hold is replaced, so would not read back as given.
    const readableName = fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.constantFrom('七七七七', '😀😀', 'read_file', 'a_tool_with_a_long_name'));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(anyCall, readableName).map(([c, name]) => ({ ...c, name })), { minLength: 1, maxLength: 12 }), fc.option(fc.integer({ min: 320, max: 1600 }), { nil: undefined }), async (given, width) => {
        const calls = given.map((c, i) => call(`call_${i}`, c.name, { ...c, index: i }));
        const seen = await measure(drawTimeline(calls, width, 'any schedule'));
        expectReadable(seen, calls.map((c) => ({ id: c.id, label: `${c.name} ${c.id}` })));
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  /** Opens the picture as a file and reads back, from the browser's layout, every text's box and each call's parts. */
  async function measure(svg: string): Promise<Seen> {
    const file = join(dir, `readable-${Math.random().toString(36).slice(2)}.svg`);
    writeFileSync(file, svg);
    const width = Number(/width="(\d+)"/.exec(svg)![1]);
    const page = await browser.newPage({ viewport: { width: Math.max(width, 320), height: 800 }, deviceScaleFactor: 1 });
    await page.goto(pathToFileURL(file).href);
    const seen = await page.evaluate(() => {
      const root = document.documentElement as unknown as SVGSVGElement;
      const box = (e: Element) => {
        const b = (e as SVGGraphicsElement).getBBox();
        return { x: b.x, y: b.y, width: b.width, height: b.height };
      };
      const visible = (e: Element) => getComputedStyle(e).visibility !== 'hidden' && getComputedStyle(e).display !== 'none';
      return {
        width: root.width.baseVal.value,
        height: root.height.baseVal.value,
        texts: Array.from(document.querySelectorAll('text')).map((t) => ({ of: t.getAttribute('data-label-for'), text: t.textContent ?? '', box: box(t), visible: visible(t) })),
        calls: Array.from(document.querySelectorAll('g[data-call]')).map((g) => ({
          id: g.getAttribute('data-call')!,
          label: Array.from(g.querySelectorAll('text')).map((t) => t.textContent).join(''),
          inside: g.querySelector('text')?.getAttribute('data-placement') === 'inside',
          marks: Array.from(g.querySelectorAll('[data-part]')).map((m) => ({ box: box(m), visible: visible(m) })),
          waits: Array.from(g.querySelectorAll('[data-wait]')).map((w) => w.getAttribute('data-wait')!),
          others: Array.from(g.querySelectorAll('[data-wait], [data-commit-for]')).map(box),
        })),
      };
    });
    await page.close();
    return seen;
  }
});

interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}
interface Seen {
  readonly width: number;
  readonly height: number;
  readonly texts: readonly { readonly of: string | null; readonly text: string; readonly box: Rect; readonly visible: boolean }[];
  readonly calls: readonly { readonly id: string; readonly label: string; readonly inside: boolean; readonly marks: readonly { readonly box: Rect; readonly visible: boolean }[]; readonly waits: readonly string[]; readonly others: readonly Rect[] }[];
}

// Boxes that touch (a shared edge, or under half a pixel of the browser's rounding) do not overlap.
const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;
const contains = (outer: Rect, inner: Rect) => inner.x >= outer.x - 0.5 && inner.y >= outer.y - 0.5 && inner.x + inner.width <= outer.x + outer.width + 0.5 && inner.y + inner.height <= outer.y + outer.height + 0.5;

/** Each call has a visible mark and its whole label; no text leaves the picture or overlaps another, or a mark not its own bar. */
function expectReadable(seen: Seen, calls: readonly { readonly id: string; readonly label: string }[]) {
  const picture = { x: 0, y: 0, width: seen.width, height: seen.height };
  expect(seen.calls.map((c) => c.id).sort()).toEqual(calls.map((c) => c.id).sort());
  for (const { id, label } of calls) {
    const drawn = seen.calls.find((c) => c.id === id)!;
    expect(drawn.label.startsWith(label), `${id}: "${drawn.label}"`).toBe(true);
    expect(drawn.marks.length).toBeGreaterThan(0);
    for (const mark of drawn.marks) {
      expect(mark.visible).toBe(true);
      expect(mark.box.width, id).toBeGreaterThanOrEqual(2);
      expect(contains(picture, mark.box), id).toBe(true);
    }
  }
  for (const text of seen.texts) {
    expect(text.visible).toBe(true);
    expect(contains(picture, text.box), `"${text.text}" at ${JSON.stringify(text.box)} leaves the ${seen.width}×${seen.height} picture`).toBe(true);
    for (const other of seen.texts) if (other !== text) expect(overlaps(text.box, other.box), `"${text.text}" over "${other.text}"`).toBe(false);
    for (const drawn of seen.calls) {
      const own = drawn.id === text.of;
      for (const mark of drawn.marks) if (!(own && drawn.inside && contains(mark.box, text.box))) expect(overlaps(text.box, mark.box), `"${text.text}" over ${drawn.id}'s bar`).toBe(false);
      for (const part of drawn.others) expect(overlaps(text.box, part), `"${text.text}" over a wait or tick of ${drawn.id}`).toBe(false);
    }
  }
}

const outsideDenied: PrePolicy = ({ call }) => (String((call.args as { path?: unknown }).path).startsWith('..') ? { decision: 'deny', reason: 'outside the workspace' } : undefined);

/** A run like the demo's at a terminal: three reads, a write that waits for an approval and is rejected, a denied read. */
async function demoLikeRun() {
  const read = defineTool({ name: 'read_file', description: 'reads', input: z.object({ path: z.string() }), mode: 'parallel', execute: async () => (await new Promise((r) => setTimeout(r, 60)), 'text') });
  const write = defineTool({ name: 'write_file', description: 'writes', input: z.object({ path: z.string() }), mode: 'exclusive', execute: () => 'written' });
  const pipeline = createPipeline({
    tools: [read, write],
    concurrency: 4,
    pre: [outsideDenied, askTools(['write_file'])],
    approve: async () => (await new Promise((r) => setTimeout(r, 150)), 'rejected' as const),
  });
  const calls = [
    { id: 'toolu_01', name: 'read_file', args: { path: 'a' } },
    { id: 'toolu_02', name: 'read_file', args: { path: 'b' } },
    { id: 'toolu_03', name: 'read_file', args: { path: 'c' } },
    { id: 'toolu_04', name: 'write_file', args: { path: 'summary.md' } },
    { id: 'toolu_05', name: 'read_file', args: { path: '../../etc/passwd' } },
  ];
  const events = await firstValueFrom(pipeline.events(calls).pipe(toArray()));
  return { events, tools: pipeline.tools };
}
