import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, renderTimeline, type ToolCall } from '../../src/index.js';
import { chromiumAvailable, CHROMIUM_MISSING, launchChromium, requireChromium } from '../support/chromium.js';

requireChromium();

const echo = defineTool({ name: 'echo', description: 'answers at once', input: z.object({}), mode: 'parallel', execute: () => 'echo' });

/** XML 1.0's `Char`: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]. */
const xmlChar = (c: number) => c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || c >= 0x10000;

/** A code unit outside `Char` (with the `u` flag a lone surrogate is one; a well-formed pair is not). */
const NOT_XML = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Any code point, lone surrogates included, and often one XML cannot hold or must escape. */
const anyChar = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.constantFrom('\0', '\x01', '\x08', '\x0B', '\x0C', '\x1F', '\t', '\n', '\r', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uFFFE', '\uFFFF', '&', '<', '>', '"', "'", '😀', '\u2028'),
);
const text = (minLength: number) => fc.string({ unit: anyChar, minLength, maxLength: 12 });

/** What the browser read back from a picture: whether it parsed, and each call's id and hover title. */
interface Parsed {
  readonly error: string | null;
  readonly heading: string | null;
  readonly calls: readonly { readonly id: string | null; readonly title: string | null }[];
}

function parseInBrowser(page: Page, svg: string): Promise<Parsed> {
  return page.evaluate((svg) => {
    const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
    const error = doc.getElementsByTagName('parsererror')[0];
    if (error !== undefined) return { error: error.textContent ?? 'parsererror', heading: null, calls: [] };
    return {
      error: null,
      heading: doc.documentElement.querySelector(':scope > title')?.textContent ?? null,
      calls: Array.from(doc.querySelectorAll('g[data-call]')).map((g) => ({ id: g.getAttribute('data-call'), title: g.querySelector(':scope > title')?.textContent ?? null })),
    };
  }, svg);
}

/** `drawn` is `given` with each character XML cannot hold replaced by one it can, the others unchanged. */
function expectDrawnAs(drawn: string | null, given: string) {
  const want = [...given];
  const got = [...(drawn ?? '')];
  expect(got).toHaveLength(want.length);
  want.forEach((c, i) => {
    if (xmlChar(c.codePointAt(0)!)) expect(got[i]).toBe(c);
    else expect(xmlChar(got[i]!.codePointAt(0)!)).toBe(true);
  });
}

describe.skipIf(!chromiumAvailable())(`renderTimeline parses as XML in a real browser${chromiumAvailable() ? '' : ` (${CHROMIUM_MISSING})`}`, () => {
  let browser: Browser;
  let page: Page;
  let dir: string;
  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage();
    dir = mkdtempSync(join(tmpdir(), 'toolstream-timeline-xml-'));
  });
  afterAll(async () => {
    await browser?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('whatever the ids, tool names and title hold: characters XML cannot hold are replaced, the rest drawn as given', async () => {
    const calls = fc.uniqueArray(fc.record({ id: text(1), name: fc.oneof(fc.constant('echo'), text(0)) }), { minLength: 1, maxLength: 5, selector: (call) => call.id });
    await fc.assert(
      fc.asyncProperty(calls, text(0), async (given, title) => {
        const results = await createPipeline({ tools: [echo] }).run(given.map((call): ToolCall => ({ ...call, args: {} })));
        const svg = renderTimeline(results, { title });
        // Every code unit is an XML character: Chromium reads a lone surrogate as U+FFFD, stricter parsers
        // (and an encoder to UTF-8) refuse it or change it, so it must not be written.
        expect(svg).not.toMatch(NOT_XML);
        const parsed = await parseInBrowser(page, svg);
        expect(parsed.error).toBeNull();
        expectDrawnAs(parsed.heading, title);
        expect(parsed.calls).toHaveLength(given.length);
        for (const { id, title: hover } of parsed.calls) {
          // The hover title ends "; result #<index> at <t> ms": it says which call the group is.
          const index = Number(/; result #(\d+) at [^;]* ms$/.exec(hover ?? '')?.[1]);
          const call = given[index]!;
          expectDrawnAs(id, call.id);
          const named = `${call.name} ${call.id}`;
          expectDrawnAs([...hover!].slice(0, [...named].length).join(''), named);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('ordinary text, markup characters, tabs and line breaks included, is drawn unchanged', async () => {
    const id = 'call <1> & "two" \'3\'\tfour\nfive\r\nsix — 七 😀';
    const results = await createPipeline({ tools: [echo] }).run([{ id, name: 'echo', args: {} }]);
    const svg = renderTimeline(results, { title: 'a title & <more>\n' });
    const parsed = await parseInBrowser(page, svg);
    expect(parsed).toMatchObject({ error: null, heading: 'a title & <more>\n', calls: [{ id }] });
    expect(parsed.calls[0]!.title!.startsWith(`echo ${id}: ok`)).toBe(true);
    expect(svg).toContain('七 😀');
  });

  it('a label too long for the picture is wrapped, whole, never between the halves of a character', async () => {
    for (const id of ['😀'.repeat(300), `a${'😀'.repeat(300)}`]) {
      // One call a picture, 320 px wide: the label takes several lines below its bar; either parity of the split.
      const [result] = await createPipeline({ tools: [echo] }).run([{ id, name: 'echo', args: {} }]);
      const svg = renderTimeline([result!], { width: 320 });
      expect(svg).not.toMatch(NOT_XML);
      const labels = await page.evaluate((svg) => {
        const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
        return Array.from(doc.querySelectorAll('g[data-call] > text')).map((t) => t.textContent ?? '');
      }, svg);
      expect(labels.length).toBeGreaterThan(1);
      expect(labels.join('')).toBe(`echo ${id}`);
    }
  });

  it('opened as a file, a picture with control characters in its ids is an SVG document, not an error page', async () => {
    const results = await createPipeline({ tools: [echo] }).run([{ id: 'bell\x07 nul\0 esc\x1B', name: 'echo\x01', args: {} }]);
    const file = join(dir, 'controls.svg');
    writeFileSync(file, renderTimeline(results));
    const opened = await browser.newPage();
    await opened.goto(pathToFileURL(file).href);
    expect(await opened.evaluate(() => [document.documentElement.localName, document.getElementsByTagName('parsererror').length])).toEqual(['svg', 0]);
    await opened.close();
  });
});
