// examples/readme/durable.ts — the README's durable turn, run: a write waits for a human's approval,
// which a second "request" (here a second pipeline on the same store) answers.
import assert from 'node:assert/strict';
import { z } from 'zod';
import { defineTool } from 'toolstream';

const writes: string[] = [];
const tools = [
  defineTool({ name: 'read_file', description: 'Read', input: z.object({ path: z.string() }), mode: 'parallel', execute: ({ path }) => `text of ${path}` }),
  defineTool({ name: 'write_file', description: 'Write', input: z.object({ path: z.string() }), execute: ({ path }) => (writes.push(path), `wrote ${path}`) }),
];
const calls = [
  { id: 'call_1', name: 'read_file', args: { path: 'a.md' } },
  { id: 'call_2', name: 'write_file', args: { path: 'b.md' } },
];
const journal = memoryJournal();
const sendToHuman = (approvals: readonly PendingApproval[]) => approvals.map(({ token }) => token);

// #region readme
import { askTools, createPipeline, memoryJournal, suspendApprovals, type PendingApproval } from 'toolstream';

const pipeline = createPipeline({
  tools,
  pre: [askTools(['write_file'])],
  approve: suspendApprovals(), // ask later, in another request
  journal, // memoryJournal(), or sqliteJournal({ path }) from 'toolstream/sqlite'
  approvalSecret: process.env['APPROVAL_SECRET'] ?? 'a secret of at least 32 bytes, kept from the model',
});

// Request 1: the model's calls run; the write waits.
const turn = 'conversation-7/response-3';
const first = await pipeline.run(calls, { turn }); // [read: ok, write: suspended]
const tokens = sendToHuman(await pipeline.pendingApprovals(turn));

// Request 2, any process with the same store and secret: the human said yes.
const results = await pipeline.resume(turn, { answers: tokens.map((token) => ({ token, answer: 'allowed-once' as const })) });
// results: the whole turn, in order — the read replayed, not run again; the write run once.
// #endregion readme

assert.deepEqual(first.map((r) => r.status), ['ok', 'suspended']);
assert.deepEqual(results.map((r) => [r.status, r.content]), [['ok', 'text of a.md'], ['ok', 'wrote b.md']]);
assert.deepEqual(writes, ['b.md']);
