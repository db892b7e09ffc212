// examples/postgres.ts
// The PostgreSQL journal of the docs, on the database DATABASE_URL names: a turn, then resumed by a
// pipeline on a journal opened anew — as another app server, or this one after a restart, would. Run by
// test/durable/postgres/readmeExample.test.ts on a PostgreSQL of its own (not under examples/readme/,
// which test/readme.test.ts runs with no database).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from 'toolstream';

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
const [conversationId, responseId] = [`conv_${randomUUID()}`, 'msg_1']; // a database shared by runs: a turn of its own

// #region readme
import { postgresJournal } from 'toolstream/postgres';

// Every app server opens the same database; the schema and its tables are created at the first use.
const journal = postgresJournal({ connectionString: process.env.DATABASE_URL! }, { schema: 'agents' });
const pipeline = createPipeline({ tools, journal, approvalSecret });
const results = await pipeline.run(calls, { turn: `${conversationId}/${responseId}` });

// Later — another request, on another app server, or this one restarted after a crash:
const elsewhere = postgresJournal({ connectionString: process.env.DATABASE_URL! }, { schema: 'agents' });
const later = createPipeline({ tools, journal: elsewhere, approvalSecret });
const resumed = await later.resume(`${conversationId}/${responseId}`); // finished calls are replayed, not run
// #endregion readme

assert.deepEqual(results.map((r) => r.content), ['sunny in Oslo', 'sent to ops@example.com']);
assert.deepEqual(resumed.map((r) => [r.id, r.status, r.content]), results.map((r) => [r.id, r.status, r.content]));
assert.deepEqual(sent, ['ops@example.com']); // the e-mail went once
await journal.close();
await elsewhere.close(); // each ends the pool it made
console.log('postgres example: ok');
