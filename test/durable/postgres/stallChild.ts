/**
 * The stalled owner of `stall.test.ts`, bundled and run with plain node (see
 * `test/durable/sqlite/processes.ts`): `drive <url> <schema> <dir> <turn>` opens a postgresJournal,
 * prints `ready`, waits for a line on stdin, runs the stalled-owner tests' turn (`../stall/stallTools.ts`)
 * as a durable turn, printing `start <call id>` as each body starts, and at the end
 * `{ "results": [...] }` or `{ "error": code }`.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { postgresJournal } from '../../../src/durable/postgres/index.js';
import { stallPipeline, stallTurn } from '../stall/stallTools.js';

const [mode, url, schema, dir, turn] = process.argv.slice(2);
if (mode !== 'drive') throw new Error(`unknown mode ${mode}`);
const journal = postgresJournal({ connectionString: url! }, { schema: schema! });
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
  const { code } = error as { code?: string };
  print(JSON.stringify({ error: code ?? String(error) }));
}
await journal.close();
