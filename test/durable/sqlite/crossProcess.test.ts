/**
 * Two processes on one SQLite journal: what SQLite's locking must make atomic across them.
 * - Both resume the same suspended turn with the same approval at once: the approved body runs once,
 *   and so does every call behind it; the other resume is refused, or replays the winner's results.
 * - Both consume the same nonces and take the same leases, interleaved: each is won by one of them.
 * - One appends batches while the other reads: a read never sees part of a batch.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteJournal, type SqliteJournal } from '../../../src/durable/sqlite/index.js';
import type { ToolCall } from '../../../src/index.js';
import { crashPipeline } from './crashTools.js';
import { buildChild, startChild, type Child } from './processes.js';

const ROUNDS = Number(process.env.RACE_ROUNDS ?? 10);

describe('two processes on one SQLite journal', () => {
  let child: Awaited<ReturnType<typeof buildChild>>;
  let dir: string;
  let path: string;
  let store: SqliteJournal;

  beforeAll(async () => {
    child = await buildChild();
    dir = mkdtempSync(join(tmpdir(), 'toolstream-two-processes-'));
    path = join(dir, 'journal.db');
    store = sqliteJournal({ path });
  });
  afterAll(() => {
    store?.close();
    child?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts children, waits until each is ready, then sends each its line at once. */
  const together = async (children: readonly Child[], line: string) => {
    for (const c of children) expect(await c.nextLine()).toBe('ready');
    for (const c of children) c.process.stdin.write(`${line}\n`);
  };
  const runsIn = (marks: string) => Object.fromEntries(readdirSync(marks).map((id) => [id, readFileSync(join(marks, id), 'utf8').split('\n').length - 1]));

  // `write` suspends for its approval; the `charge` after it waits behind the exclusive write.
  const raceTurn: ToolCall[] = [
    { id: 'f', name: 'fetch', args: { ms: 1 } },
    { id: 'w', name: 'write', args: { ms: 2 } },
    { id: 'c', name: 'charge', args: { ms: 1 } },
  ];

  it(`the same approval, resumed by two processes at once, runs its body once (${ROUNDS} rounds)`, async () => {
    const outcomes: string[] = [];
    // Each round's two processes start during the round before (starting node is most of a round).
    const spawnRacers = (round: number) => {
      const turn = `race ${round}`;
      const marks = join(dir, `race-${round}`);
      mkdirSync(marks);
      return { turn, marks, racers: [0, 1].map(() => startChild(child.script, ['resume', path, marks, turn])) };
    };
    let next = spawnRacers(0);
    for (let round = 0; round < ROUNDS; round++) {
      const { turn, marks, racers } = next;
      if (round + 1 < ROUNDS) next = spawnRacers(round + 1);
      const pipeline = crashPipeline(store, marks);
      const first = await pipeline.run(raceTurn, { turn });
      expect(first.map((r) => r.status)).toEqual(['ok', 'suspended', 'suspended']);
      const [approval] = await pipeline.pendingApprovals(turn);

      await together(racers, approval!.token);
      const said = await Promise.all(racers.map(async (racer) => JSON.parse(await racer.nextLine()) as { results?: { id: string; status: string; code?: string; content: string }[]; error?: string }));
      for (const racer of racers) expect((await racer.exited).code).toBe(0);
      const context = JSON.stringify({ round, said, runs: runsIn(marks) });

      // Exactly one body run per call, whoever won.
      expect(runsIn(marks), context).toEqual({ f: 1, w: 1, c: 1 });
      const won = said.filter((s) => s.results?.every((r) => r.status === 'ok'));
      expect(won.length, context).toBeGreaterThanOrEqual(1);
      for (const s of said) {
        // The other: refused (the lease was live, or the token was used) or a replay of the same results.
        if (s.error !== undefined) expect(['turn_leased', 'token_used'], context).toContain(s.error);
        else expect(s.results, context).toEqual(won[0]!.results);
      }
      outcomes.push(said.map((s) => s.error ?? 'resumed').sort().join('+'));
      // The journal agrees: nothing pending, and a resume here replays the winner's results.
      expect(await pipeline.pendingApprovals(turn)).toEqual([]);
      const replayed = await pipeline.resume(turn);
      expect(replayed.map((r) => ({ id: r.id, status: r.status, code: r.error?.code, content: r.content })), context).toEqual(won[0]!.results!.map(({ code: _code, ...rest }) => ({ ...rest, code: undefined })));
      expect(runsIn(marks), context).toEqual({ f: 1, w: 1, c: 1 });
    }
    console.log(`approval race: ${outcomes.join(', ')}`);
  });

  it('consuming nonces and taking leases, interleaved across two processes: each is won once', async () => {
    const COUNT = 5_000;
    // Both must win some of each, or the two did not really run interleaved and the check proves little.
    // On a loaded machine one process may be scheduled through the whole loop before the other starts:
    // then the round is run again (each round is checked in full), a few times at most.
    const lopsided: string[] = [];
    for (let round = 0; round < 5; round++) {
      const racers = [0, 1].map(() => startChild(child.script, ['contend', path, String(COUNT), `r${round}/`]));
      await together(racers, 'go');
      const [a, b] = await Promise.all(racers.map(async (racer) => JSON.parse(await racer.nextLine()) as { nonces: number[]; leases: number[] }));
      for (const kind of ['nonces', 'leases'] as const) {
        const all = [...a![kind], ...b![kind]].sort((x, y) => x - y);
        expect(all).toEqual(Array.from({ length: COUNT }, (_, i) => i));
      }
      const split = `${a!.nonces.length}/${b!.nonces.length} nonces, ${a!.leases.length}/${b!.leases.length} leases`;
      if (Math.min(a!.nonces.length, b!.nonces.length, a!.leases.length, b!.leases.length) > 0) {
        console.log(`contention: ${split}${lopsided.length > 0 ? ` (after ${lopsided.length} lopsided round(s): ${lopsided.join('; ')})` : ''}`);
        return;
      }
      lopsided.push(split);
    }
    expect.fail(`the two processes never interleaved in 5 rounds: ${lopsided.join('; ')}`);
  });

  it('an append is atomic across processes: a read never sees part of a batch', async () => {
    const SIZE = 7;
    const writer = startChild(child.script, ['append', path, 'batches', String(SIZE), '3000']);
    await together([writer], 'go');
    let done = false;
    void writer.nextLine().then(() => (done = true));
    const seen = new Set<number>();
    while (!done) {
      const length = store.read('batches').length;
      expect(length % SIZE).toBe(0);
      seen.add(length);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(store.read('batches')).toHaveLength(SIZE * 3_000);
    console.log(`atomic append: ${seen.size} distinct lengths read while the other process appended`);
    expect(seen.size).toBeGreaterThan(2); // the reads overlapped the appends
  });
});
