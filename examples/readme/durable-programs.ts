// examples/readme/durable-programs.ts
// The README's program in a durable turn: its write waits for a human, and the turn is resumed by
// another pipeline on the same journal (as another process would), the first read answered from the journal.
import assert from 'node:assert/strict';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, runCodeTool, suspendApprovals, type ProgramOutput } from 'toolstream';
import { createQuickJSRuntime } from 'toolstream/quickjs';

const ran: string[] = [];
const files = new Map([['notes.md', '# Notes\nShip the durable turns.']]);
const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file',
  input: z.object({ path: z.string() }),
  mode: 'parallel',
  execute: ({ path }) => (ran.push(`read ${path}`), files.get(path) ?? ''),
});
const writeFile = defineTool({
  name: 'write_file',
  description: 'Write a file',
  input: z.object({ path: z.string(), text: z.string() }),
  execute: ({ path, text }) => (ran.push(`write ${path}`), files.set(path, text), `wrote ${text.length} characters`),
});
const runtime = createQuickJSRuntime();
const journal = memoryJournal();
const approvalSecret = 'a secret of at least 32 bytes, out of the model’s reach';
const makePipeline = () =>
  createPipeline({ tools: [readFile, writeFile, runCodeTool({ runtime })], pre: [askTools(['write_file'])], approve: suspendApprovals(), journal, approvalSecret });
const pipeline = makePipeline();

// #region readme
const turn = 'conversation-1/response-1';
const program = `
  const notes = await tools.read_file({ path: 'notes.md' });
  await tools.write_file({ path: 'summary.md', text: notes.split('\\n')[1] });
  return await tools.read_file({ path: 'summary.md' });`;

// Request 1: the write waits for a human, so the program stops and its call is suspended.
const [first] = await pipeline.run([{ id: 'call_1', name: 'run_code', args: { program } }], { turn });
const approvals = await pipeline.pendingApprovals(turn); // [{ callId: 'call_1#2', tool: 'write_file', … }]

// Request 2, in any process with the same journal and secret: the program runs again from the start,
// its first read answered from the journal; the write runs once.
const [done] = await makePipeline().resume(turn, { answers: approvals.map(({ token }) => ({ token, answer: 'allowed-once' as const })) });
// #endregion readme

assert.equal(first?.status, 'suspended');
assert.deepEqual(approvals.map(({ callId, tool, args }) => ({ callId, tool, args })), [{ callId: 'call_1#2', tool: 'write_file', args: { path: 'summary.md', text: 'Ship the durable turns.' } }]);
assert.equal(done?.status, 'ok');
assert.equal((done?.value as ProgramOutput).value, 'Ship the durable turns.');
assert.deepEqual(ran, ['read notes.md', 'write summary.md', 'read summary.md']);
await runtime.close();
console.log('durable program: ok');
