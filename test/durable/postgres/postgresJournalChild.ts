/**
 * The other process of the PostgreSQL SIGKILL test, bundled and run with plain node (see
 * `test/durable/sqlite/processes.ts`): `drive <url> <schema> <dir> <turn>` opens a postgresJournal, runs
 * the crash turn once in memory (warm, as a server is), connects, prints `ready`, waits for a line on
 * stdin, runs `crashTurn` as a durable turn on PostgreSQL, and prints `done` — unless the test kills it first.
 */
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { memoryJournal } from '../../../src/index.js';
import { postgresJournal } from '../../../src/durable/postgres/index.js';
import { crashPipeline, crashTurn } from '../sqlite/crashTools.js';

const [mode, url, schema, dir, turn] = process.argv.slice(2);
if (mode !== 'drive') throw new Error(`unknown mode ${mode}`);
const journal = postgresJournal({ connectionString: url! }, { schema: schema! });
const scratch = `${dir!}-warm-up`;
mkdirSync(scratch);
await crashPipeline(memoryJournal(), scratch).run(crashTurn, { turn: 'warm-up' });
await journal.read(turn!); // connected (and the schema made sure of) before the kill window opens
const pipeline = crashPipeline(journal, dir!);
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await once(lines, 'line');
lines.close();
await pipeline.run(crashTurn, { turn: turn! });
process.stdout.write('done\n');
await journal.close();
