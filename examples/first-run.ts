// First run: a scripted "model" streams 9 tool calls; toolstream executes them as they arrive.
// Run with `npm run example:first-run`. Everything is local: the tools read this repository and write to a temp dir.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { concatMap, from, lastValueFrom, map, tap, timer, toArray } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, terminalProgress, type ToolCall, type ToolResult } from '../src/index.js';
import { pathSandbox } from '../src/node/index.js';

const root = fileURLToPath(new URL('..', import.meta.url)); // the repository; tool paths are relative to it
const notesDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolstream-first-run-'));

// --- progress: a line per call (terminalProgress), live at a terminal, plain in a pipe; and our own
// lines, milliseconds since start, through it so they never break the live lines ---
const t0 = performance.now();
const progress = terminalProgress(process.stdout);
const log = (text: string) => progress.log(`[${(performance.now() - t0).toFixed(0).padStart(4)} ms] ${text}`);

// --- tools. `parallel` tools may overlap; an `exclusive` tool (the default mode) runs alone. ---
// Bodies get ctx.signal: pass it on, so a timeout or cancellation really stops the work.
const file = z.object({ path: z.string() });

const listDir = defineTool({
  name: 'list_dir', description: 'List a directory of the repository', input: file, mode: 'parallel',
  execute: ({ path: p }) => fs.readdir(path.resolve(root, p)),
});
const readFile = defineTool({
  name: 'read_file', description: 'Read a UTF-8 file of the repository', input: file, mode: 'parallel',
  execute: ({ path: p }, ctx) => fs.readFile(path.resolve(root, p), { encoding: 'utf8', signal: ctx.signal }),
});
const hashFile = defineTool({
  name: 'hash_file', description: 'sha256 of a file of the repository', input: file, mode: 'parallel',
  execute: async ({ path: p }, ctx) => {
    const bytes = await fs.readFile(path.resolve(root, p), { signal: ctx.signal });
    return createHash('sha256').update(bytes).digest('hex');
  },
});
// Polls for a file that never appears in this demo, so its 300 ms limit fires: the body's signal aborts
// and the call gets a `timeout` error result. By default (onError: 'cancel-rest') a failed call (throw,
// rejection, timeout) cancels every unfinished call of the batch: here #5 and #7 would come back
// `cancelled` without running. This tool opts out with 'continue' (it can also be set on the pipeline).
const waitForFile = defineTool({
  name: 'wait_for_file', description: 'Wait until a file exists', input: file, mode: 'parallel',
  timeoutMs: 300, onError: 'continue',
  execute: async ({ path: p }, ctx) => {
    for (;;) {
      if (await fs.access(path.resolve(root, p)).then(() => true, () => false)) return `${p} exists`;
      await sleep(50, undefined, { signal: ctx.signal }); // rejects with an AbortError on timeout
    }
  },
});
// A write: exclusive, so it starts only after every earlier call has finished, and later calls wait for it.
const writeNote = defineTool({
  name: 'write_note', description: 'Save a note', input: z.object({ title: z.string(), text: z.string() }),
  mode: 'exclusive',
  execute: async ({ title, text }, ctx) => {
    const target = path.join(notesDir, `${title.replace(/\W+/g, '_')}.md`);
    await fs.writeFile(target, text, { signal: ctx.signal });
    return `saved ${text.length} chars to ${target}`;
  },
});

// A pre-execute policy: path arguments must stay inside the repository. Relative paths are rewritten to
// absolute ones inside it; anything outside is denied before any tool body runs.
const pipeline = createPipeline({
  tools: [listDir, readFile, hashFile, waitForFile, writeNote],
  concurrency: 4,
  pre: [pathSandbox({ root })],
  observers: [progress], // every event of every run: ▸ a body runs, ✓/✗ how each call ended
});

// --- the "model": calls arrive one at a time, args as JSON strings (as OpenAI streams them) ---
const script: [delayMs: number, call: ToolCall][] = [
  [0, { id: 'call_0', name: 'list_dir', args: '{"path":"src"}' }],
  [30, { id: 'call_1', name: 'wait_for_file', args: '{"path":"dist/.never-built"}' }],
  [30, { id: 'call_2', name: 'read_file', args: '{"path":"package.json"}' }],
  [30, { id: 'call_3', name: 'hash_file', args: '{"path":"package-lock.json"}' }],
  // Bad calls are answered at intake with an error result for the model; they never run, take no
  // slot, and do not trigger onError.
  [30, { id: 'call_4', name: 'read_file', args: '{"path":42}' }], // fails the schema: never runs
  [30, { id: 'call_5', name: 'write_note', args: '{"title":"first run","text":"toolstream works"}' }],
  [30, { id: 'call_6', name: 'run_shell', args: '{"cmd":"rm -rf /"}' }], // no such tool: never runs
  [30, { id: 'call_7', name: 'read_file', args: '{"path":"tsconfig.json"}' }],
  [30, { id: 'call_8', name: 'read_file', args: '{"path":"../../etc/passwd"}' }], // outside the root: denied
];
let arrived = 0;
const calls$ = from(script).pipe(
  concatMap(([delayMs, call]) => timer(delayMs).pipe(map(() => call))),
  tap((call) => log(`→ call #${arrived++} arrives: ${call.name} ${String(call.args)}`)),
);

// --- print each result as the pipeline emits it ---
// Bodies finish out of order (#2 and #3 long before #1 times out), but results come out in input order:
// each waits until every earlier result is out. Note `total` ends when the result was built, not when
// it was emitted, so #2 shows a tiny total although it is printed only after #1.
const oneLine = (text: string, max = Infinity) =>
  JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);

function printResult(r: ToolResult): void {
  const d = r.timing.durations;
  const ms = (n: number) => `${n.toFixed(0)}ms`;
  // A successful result's content is the tool's output (truncated here); a failure's is a message for the model.
  const what = r.status === 'ok' ? oneLine(r.content, 60) : `${r.error.code}: ${oneLine(r.error.message)}`;
  log(`← result #${r.index} ${r.id} ${r.name} → ${r.status} ${what}`);
  log(`      timing: intake ${ms(d.intake)}, queue ${ms(d.queue)}, execute ${ms(d.execute)}, total ${ms(d.total)}`);
}

try {
  const results = await lastValueFrom(calls$.pipe(pipeline.operator(), tap(printResult), toArray()));
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  const summary = Object.entries(counts).map(([status, n]) => `${n} ${status}`).join(', ');
  log(`done: ${results.length} results (${summary})`);
} finally {
  progress.end();
  await fs.rm(notesDir, { recursive: true, force: true });
}
