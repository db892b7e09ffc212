/**
 * The stalled owner of `staleOwner.test.ts`, bundled and run with plain node (see
 * `test/durable/sqlite/processes.ts`): `drive <sqlite|redis> <path|url> <prefix> <dir> <turn>` opens the
 * journal, prints `ready`, waits for a line on stdin, runs `stallTurn` as a durable turn, printing
 * `start <call id>` as each body starts, and at the end `{ "results": [...] }` or `{ "error": code }`.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { redisJournal } from '../../../src/bullmq/index.js';
import { sqliteJournal } from '../../../src/durable/sqlite/index.js';
import type { JournalStore } from '../../../src/index.js';
import { stallPipeline, stallTurn } from './stallTools.js';

const [mode, kind, location, prefix, dir, turn] = process.argv.slice(2);
if (mode !== 'drive') throw new Error(`unknown mode ${mode}`);
const journal: JournalStore = kind === 'redis' ? redisJournal({ connection: location!, prefix: prefix! }) : sqliteJournal({ path: location! });
const print = (line: string) => process.stdout.write(`${line}\n`);
await journal.read(turn!); // connected before the test starts the clock
const pipeline = stallPipeline(journal, dir!, (callId) => print(`start ${callId}`));
const lines = createInterface({ input: process.stdin });
print('ready');
await once(lines, 'line');
lines.close();
try {
  const results = await pipeline.run(stallTurn, { turn: turn! });
  print(JSON.stringify({ results: results.map((result) => result.status) }));
} catch (error) {
  const { code, results } = error as { code?: string; results?: readonly { status: string }[] };
  print(JSON.stringify({ error: code ?? String(error), results: results?.map((result) => result.status) }));
}
await journal.close?.();
