/**
 * Issue 10, item 6, as reported: three `run_code` calls in one turn, each a program that re-sends one
 * 12 MB string to a tool whose schema rejects it (no body runs), then a 900 KB one 30 times in turn
 * and 50 times at once.
 * Run in a child process with `--expose-gc` (see ../programHeap.test.ts); prints one JSON line: what
 * each call ended with, and how much the main thread's heap grew (after GC) while holding the results.
 */
import { z } from 'zod';
import { createPipeline, defineTool, runCodeTool, type ProgramOutput } from '../../../src/index.js';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/index.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const heapAfterGc = (): number => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};

const runtime = createQuickJSRuntime();
const write = defineTool({
  name: 'write',
  description: 'Writes a small file',
  input: z.object({ path: z.string(), content: z.string().max(10_000) }),
  execute: () => {
    throw new Error('the schema rejects every call of this scenario: no body runs');
  },
});
const pipeline = createPipeline({ tools: [write, runCodeTool({ runtime })] });

const program = `
  const codes = {};
  const send = (content) => tools.write({ path: 'notes.txt', content }).then(
    () => { codes.ok = (codes.ok ?? 0) + 1; },
    (e) => { codes[e.code] = (codes[e.code] ?? 0) + 1; });
  const big = 'x'.repeat(12_000_000);
  for (let i = 0; i < 5; i++) await send(big);
  const mid = 'y'.repeat(900_000);
  for (let i = 0; i < 30; i++) await send(mid);
  await Promise.all(Array.from({ length: 50 }, () => send(mid)));
  return codes;`;

// Warm up (the worker, the interpreter, the compiled sources), so the baseline holds all of that.
await pipeline.run([{ id: 'warm', name: 'run_code', args: { program: 'return await tools.write({ path: "a", content: "b" }).catch((e) => e.code)' } }]);
const before = heapAfterGc();
const results = await pipeline.run([1, 2, 3].map((n) => ({ id: `p${n}`, name: 'run_code', args: { program } })));
const retainedBytes = heapAfterGc() - before;
console.log(
  JSON.stringify({
    results: results.map((result) => {
      const output = result.value as ProgramOutput | undefined;
      return { status: result.status, value: output?.value, logged: output?.subCalls.length, omitted: output?.subCallsOmitted };
    }),
    retainedBytes,
    rssBytes: process.memoryUsage().rss,
  }),
);
await runtime.close();
