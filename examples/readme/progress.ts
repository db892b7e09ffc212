// examples/readme/progress.ts
// The docs' progress renderer: a line per call at the terminal, from the pipeline's events. It checks
// the plain lines of a second run (what a pipe or a CI log gets).
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createPipeline, defineTool } from 'toolstream';

const fetchPage = defineTool({
  name: 'fetch_page',
  description: 'Fetch a page',
  input: z.object({ url: z.string() }),
  mode: 'parallel',
  execute: async ({ url }, ctx) => {
    ctx.progress({ url, bytes: 0 }); // shown on the call's live line
    await new Promise((resolve) => setTimeout(resolve, 40));
    return `<html>${url}</html>`;
  },
});
const pipeline = createPipeline({ tools: [fetchPage], concurrency: 2 });
const calls = [
  { id: 'call_1', name: 'fetch_page', args: { url: 'https://example.com/a' } },
  { id: 'call_2', name: 'fetch_page', args: { url: 'https://example.com/b' } },
  { id: 'call_3', name: 'delete_page', args: { url: 'https://example.com/a' } },
];

// #region readme
import { lastValueFrom, tap } from 'rxjs';
import { terminalProgress } from 'toolstream';

// At a terminal: a live line per call, updated in place (queued, running 0.4 s, …), and each result's
// line as it is given out. In a pipe or a CI log: plain lines, one per start and one per end.
const progress = terminalProgress(process.stdout);
await lastValueFrom(pipeline.events(calls).pipe(tap((event) => progress.event(event))));
progress.end();
// #endregion readme

// The same run again, its plain lines kept: one per result, in model order.
const lines: string[] = [];
const plain = terminalProgress({ write: (text) => lines.push(text) }, { plain: 'results' });
await lastValueFrom(pipeline.events(calls).pipe(tap((event) => plain.event(event))));
assert.deepEqual(
  lines.map((line) => line.replace(/in \d+ ms/, 'in N ms')),
  ['✓ fetch_page call_1 ok in N ms\n', '✓ fetch_page call_2 ok in N ms\n', '✗ delete_page call_3 error (unknown_tool) in N ms\n'],
);
