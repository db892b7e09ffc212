// examples/readme/retention.ts — the README's pruning, run: two turns end (one still waiting for a
// human), and a prune removes the finished one, keeping the one whose approval can still be answered.
import assert from 'node:assert/strict';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals } from 'toolstream';

const tools = [
  defineTool({ name: 'read_file', description: 'Read', input: z.object({ path: z.string() }), mode: 'parallel', execute: ({ path }) => `text of ${path}` }),
  defineTool({ name: 'write_file', description: 'Write', input: z.object({ path: z.string() }), execute: ({ path }) => `wrote ${path}` }),
];
const journal = memoryJournal();
const pipeline = createPipeline({ tools, journal, pre: [askTools(['write_file'])], approve: suspendApprovals(), approvalSecret: 'a secret of at least 32 bytes, kept from the model' });
await pipeline.run([{ id: 'call_1', name: 'read_file', args: { path: 'a.md' } }], { turn: 'finished' });
await pipeline.run([{ id: 'call_1', name: 'write_file', args: { path: 'b.md' } }], { turn: 'waiting' });

// #region readme
const week = 7 * 24 * 3_600_000;
setInterval(() => void journal.prune({ finishedBefore: Date.now() - week, suspended: 'expired' }), 3_600_000).unref();
// #endregion readme

// The same, for turns that ended before now (a week later, as far as the journal can tell):
assert.equal(await journal.prune({ finishedBefore: Date.now() + 1, suspended: 'expired' }), 1);
await assert.rejects(pipeline.resume('finished'), { code: 'turn_unknown' });
assert.equal((await pipeline.pendingApprovals('waiting')).length, 1); // its token lives a day: kept
