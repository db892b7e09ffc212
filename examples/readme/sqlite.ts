// examples/readme/sqlite.ts
// The README's SQLite journal, run in a temporary directory: a turn on a file, then resumed by a
// pipeline on a journal opened anew — as another process, or this one after a restart, would.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from 'toolstream';

const dir = mkdtempSync(join(tmpdir(), 'toolstream-readme-sqlite-'));
process.chdir(dir);
const sent: string[] = [];
const tools = [
  defineTool({ name: 'get_weather', description: 'Weather', input: z.object({ city: z.string() }), mode: 'parallel', idempotent: true, execute: ({ city }) => `sunny in ${city}` }),
  defineTool({ name: 'send_email', description: 'Send', input: z.object({ to: z.string() }), execute: ({ to }) => (sent.push(to), `sent to ${to}`) }),
];
const calls: ToolCall[] = [
  { id: 'toolu_1', name: 'get_weather', args: { city: 'Oslo' } },
  { id: 'toolu_2', name: 'send_email', args: { to: 'ops@example.com' } },
];
const approvalSecret = 'a secret of at least 32 bytes, from your secret store';
const [conversationId, responseId] = ['conv_1', 'msg_1'];

// #region readme
import { sqliteJournal } from 'toolstream/sqlite';

const journal = sqliteJournal({ path: 'turns.db' }); // every process of the agent opens the same file
const pipeline = createPipeline({ tools, journal, approvalSecret });
const results = await pipeline.run(calls, { turn: `${conversationId}/${responseId}` });

// Later — another request, another process, or this one restarted after a crash:
const later = createPipeline({ tools, journal: sqliteJournal({ path: 'turns.db' }), approvalSecret });
const resumed = await later.resume(`${conversationId}/${responseId}`); // finished calls are replayed, not run
// #endregion readme

assert.deepEqual(results.map((r) => r.content), ['sunny in Oslo', 'sent to ops@example.com']);
assert.deepEqual(resumed.map((r) => [r.id, r.status, r.content]), results.map((r) => [r.id, r.status, r.content]));
assert.deepEqual(sent, ['ops@example.com']); // the e-mail went once
journal.close();
process.chdir(tmpdir());
rmSync(dir, { recursive: true, force: true });
console.log('sqlite example: ok');
