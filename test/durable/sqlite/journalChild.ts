/**
 * The other process of the real-process tests, bundled once and run with plain node (see
 * `processes.ts`). It opens the journal file given as its second argument, prints `ready`, and waits
 * for a line on stdin before it does what its first argument says:
 * - `drive <path> <dir> <turn>`: runs `crashTurn` as a durable turn, then prints `done` (the test
 *   kills it before, at a moment of its choosing). It runs the turn once in memory before `ready`.
 * - `resume <path> <dir> <turn>`: resumes the turn, allowing the approval whose token is the line it
 *   was sent; prints `{ results }` (id, status, error code, content) or `{ error }` (the error's code).
 * - `contend <path> <count> [round]`: consumes nonces `n0`… of one turn and takes the leases of turns
 *   `lease <round>0`…, racing another process; prints the indices it won, of each.
 * - `append <path> <turn> <size> <count>`: appends `count` batches of `size` entries to the turn.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { sqliteJournal } from '../../../src/durable/sqlite/index.js';
import { memoryJournal } from '../../../src/index.js';
import { crashPipeline, crashTurn } from './crashTools.js';

const [mode, path, ...rest] = process.argv.slice(2);
const journal = sqliteJournal({ path: path! });
const print = (line: string) => process.stdout.write(`${line}\n`);
/** Says `ready`, and resolves with the first line the test sends (`go`, or a token). */
const go = async (): Promise<string> => {
  const lines = createInterface({ input: process.stdin });
  print('ready');
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return line;
};

switch (mode) {
  case 'drive': {
    const [dir, turn] = rest;
    // Warm, as a server is: the same turn once, in memory, so the kill window is the turn's, not the JIT's.
    // Its marks go beside the turn's, in the test's directory (removed with it, even if this is killed now).
    const scratch = `${dir!}-warm-up`;
    mkdirSync(scratch);
    await crashPipeline(memoryJournal(), scratch).run(crashTurn, { turn: 'warm-up' });
    const pipeline = crashPipeline(journal, dir!);
    await go();
    await pipeline.run(crashTurn, { turn: turn! });
    print('done');
    break;
  }
  case 'resume': {
    const [dir, turn] = rest;
    const pipeline = crashPipeline(journal, dir!);
    const token = await go();
    try {
      const results = await pipeline.resume(turn!, { answers: [{ token, answer: 'allowed-once' }] });
      print(JSON.stringify({ results: results.map((r) => ({ id: r.id, status: r.status, code: r.error?.code, content: r.content })) }));
    } catch (error) {
      print(JSON.stringify({ error: (error as { code?: string }).code ?? String(error) }));
    }
    break;
  }
  case 'contend': {
    const count = Number(rest[0]);
    const round = rest[1] ?? '';
    const me = randomUUID();
    await go();
    const nonces: number[] = [];
    const leases: number[] = [];
    for (let i = 0; i < count; i++) {
      if (journal.consume(`contended${round}`, `n${i}`)) nonces.push(i);
      if (journal.acquire(`lease ${round}${i}`, me, 60_000) !== undefined) leases.push(i);
    }
    print(JSON.stringify({ nonces, leases }));
    break;
  }
  case 'append': {
    const [turn, size, count] = rest;
    const owner = randomUUID();
    const lease = { turn: turn!, owner, epoch: journal.acquire(turn!, owner, 600_000)! };
    await go();
    for (let i = 0; i < Number(count); i++) {
      journal.append(turn!, Array.from({ length: Number(size) }, (_, index) => ({ kind: 'started' as const, index, at: i })), lease);
    }
    print('done');
    break;
  }
  default:
    throw new Error(`unknown mode ${mode}`);
}
journal.close();
