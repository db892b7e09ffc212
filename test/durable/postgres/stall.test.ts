/**
 * Fencing on PostgreSQL, on the database's clock (nothing here moves a clock by hand):
 * - a process that stalls past its lease (SIGSTOP) while this one takes its turn over once the lease
 *   expired on the database's clock, then wakes: it starts no body and changes nothing of the turn,
 *   and its run fails `lease_lost`;
 * - an append racing a take-over: the append waits for the take-over's transaction and then writes
 *   nothing (its lease row is read `FOR SHARE`; a plain read would see the old epoch and write);
 * - a lease taken again by its own owner: the older epoch writes nothing.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endOf } from '../../../src/durable/pruning.js';
import { postgresJournal, type PostgresJournal } from '../../../src/durable/postgres/index.js';
import { postgresAvailable, postgresMissing, requirePostgres, startPostgres, testSchema, type TestPostgres } from '../../support/postgres.js';
import { skippedBecause } from '../../support/skip.js';
import { buildChild, startChild } from '../sqlite/processes.js';
import { STALL_LEASE_MS, stallPipeline, stallTurn } from '../stall/stallTools.js';

requirePostgres();
const available = postgresAvailable();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!available)(skippedBecause('a stale owner writes nothing on PostgreSQL (the database\'s clock)', postgresMissing()), () => {
  let server: TestPostgres;
  let raw: pg.Pool;
  let store: PostgresJournal;
  const schema = testSchema('stall');
  const dirs: string[] = [];

  beforeAll(async () => {
    server = await startPostgres();
    raw = new pg.Pool({ connectionString: server.url, max: 3 });
    store = postgresJournal({ connectionString: server.url }, { schema });
    await store.read('nothing'); // the schema
  });
  afterAll(async () => {
    await store?.close();
    await raw?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await raw?.end();
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a process stopped past its lease, taken over, then woken: lease_lost, no body twice, the turn the new owner\'s', async () => {
    const child = await buildChild('test/durable/postgres/stallChild.ts');
    const dir = mkdtempSync(join(tmpdir(), 'toolstream-postgres-stall-'));
    dirs.push(dir);
    const marks = join(dir, 'marks');
    mkdirSync(marks);
    const turn = 'stalled';
    const stale = startChild(child.script, ['drive', server.url, schema, marks, turn]);
    try {
      expect(await stale.nextLine()).toBe('ready');
      stale.process.stdin.write('go\n');
      expect(await stale.nextLine()).toBe('start c0');
      expect(await stale.nextLine()).toBe('start c1');
      stale.process.kill('SIGSTOP'); // mid-body of c1
      await expect(stallPipeline(store, marks).resume(turn)).rejects.toMatchObject({ code: 'turn_leased' });
      await sleep(STALL_LEASE_MS + 250); // its lease lapses, on the database's clock
      const resumed = await stallPipeline(store, marks).resume(turn);
      stale.process.kill('SIGCONT');
      const outcome = JSON.parse(await stale.nextLine()) as { error?: string };
      expect(outcome.error, JSON.stringify(outcome)).toBe('lease_lost');
      await stale.exited;

      const ids = stallTurn.map((call) => call.id);
      const starts = ids.map((id) => {
        let text = '';
        try {
          text = readFileSync(join(marks, id), 'utf8');
        } catch {
          // never started
        }
        return text.split('\n').filter((line) => line.endsWith(' start')).length;
      });
      expect(starts.every((count) => count <= 1), `body starts ${JSON.stringify(starts)}`).toBe(true);
      const entries = await store.read(turn);
      const finished = ids.map((_, index) => entries.filter((entry) => entry.kind === 'finished' && entry.index === index).length);
      expect(finished).toEqual([1, 1, 1, 1]);
      expect(endOf(entries), 'the new owner\'s `ended` stays the last entry').toBeDefined();
      // Every body started exactly once — by the stale owner (c0, c1: c1 is outcome_unknown) or the new one.
      expect(starts).toEqual([1, 1, 1, 1]);
      for (const result of resumed) {
        if (result.status === 'error') expect(result.error.code).toBe('outcome_unknown');
        else expect(result.status).toBe('ok');
      }
    } finally {
      stale.process.kill('SIGKILL');
      await stale.exited;
      child.remove();
    }
  });

  it('an append racing a take-over waits for it, then writes nothing', async () => {
    const turn = 'race';
    const a = { turn, owner: 'a', epoch: (await store.acquire(turn, 'a', 60_000))! };
    const takeover = await raw.connect();
    try {
      // The take-over, as another process's acquire does it (its lease expired), held open.
      await takeover.query('BEGIN');
      await takeover.query(`UPDATE "${schema}".leases SET owner = 'b', until = 1e15, epoch = epoch + 1 WHERE turn = $1`, [turn]);
      const appending = store.append(turn, [{ kind: 'started', index: 0, at: 1 }], a);
      // It waits on the lease row's lock (a plain read would not: it would see epoch 1 and write).
      let waiting = false;
      for (let tries = 0; tries < 200 && !waiting; tries++) {
        const { rowCount } = await raw.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO "${schema}".appends%'`);
        waiting = rowCount === 1;
        if (!waiting) await sleep(25);
      }
      await takeover.query('COMMIT');
      expect(waiting, 'the append waited for the take-over').toBe(true);
      expect(await appending).toBe(false);
      expect(await store.read(turn)).toEqual([]);
      expect(await store.append(turn, [{ kind: 'started', index: 0, at: 2 }], { turn, owner: 'b', epoch: 2 })).toBe(true);
    } finally {
      takeover.release();
    }
  });

  it('a lease its own owner took again: the older epoch writes nothing, renews nothing', async () => {
    const turn = 'again';
    const first = { turn, owner: 'a', epoch: (await store.acquire(turn, 'a', 60_000))! };
    const second = { turn, owner: 'a', epoch: (await store.acquire(turn, 'a', 60_000))! };
    expect(second.epoch).toBe(first.epoch + 1);
    expect(await store.append(turn, [{ kind: 'started', index: 0, at: 1 }], first)).toBe(false);
    expect(await store.renew(first, 60_000)).toBe(false);
    expect(await store.append(turn, [{ kind: 'started', index: 1, at: 2 }], second)).toBe(true);
    expect(await store.read(turn)).toEqual([{ kind: 'started', index: 1, at: 2 }]);
  });
});
