/**
 * A child process driving a durable turn on postgresJournal is killed with SIGKILL at random moments,
 * and this process — another one, with its own pool — resumes the turn from PostgreSQL. The checks are
 * the SQLite and Redis tests' (`../sqlite/crashChecks.ts`): write-ahead (a body that left its mark has its
 * `started` record), every call answered once and in order, a started and unfinished call
 * `outcome_unknown` (the idempotent `fetch` re-runs once), nothing non-idempotent run twice, and a
 * second resume running nothing.
 *
 * The dead driver's lease (10 s) is on the database's clock, which a test cannot move: while it lives a
 * resume is refused (`turn_leased`); then the test ends it as the clock would — `until` set in the past
 * with SQL — rather than waiting 10 s a trial. (Expiry on the database's clock itself, with a stalled
 * owner's appends refused, is `stall.test.ts`'s.)
 *
 * A statement the driver had sent when it died still runs: PostgreSQL finishes what it received (an
 * append's COMMIT included) before its backend sees the closed socket. So the journal is read only once
 * the driver's backends are gone (each driver connects under its own `application_name`); read sooner, a
 * call could look unfinished and then be finished by the dead driver's last append, which the resume
 * rightly replays.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldTurn } from '../../../src/durable/turnState.js';
import { postgresJournal, type PostgresJournal } from '../../../src/durable/postgres/index.js';
import { postgresAvailable, postgresMissing, requirePostgres, startPostgres, testSchema, type TestPostgres } from '../../support/postgres.js';
import { skippedBecause } from '../../support/skip.js';
import { checkResumed, checkWriteAhead, killConnected, killTrials } from '../sqlite/crashChecks.js';
import { crashPipeline } from '../sqlite/crashTools.js';
import { buildChild, startChild } from '../sqlite/processes.js';

requirePostgres();
const available = postgresAvailable();
/** Kills that landed before the turn was done (a child that finished first is not counted). */
const KILLS = Number(process.env.SIGKILL_RUNS ?? 50) / 2;
const MAX_DELAY_MS = 60;

describe.skipIf(!available)(skippedBecause('SIGKILL a process mid-turn, resume from another (real processes, a real PostgreSQL)', postgresMissing()), () => {
  let child: Awaited<ReturnType<typeof buildChild>>;
  let server: TestPostgres;
  let raw: pg.Pool;
  let store: PostgresJournal;
  let dir: string;
  const schema = testSchema('sigkill');

  beforeAll(async () => {
    child = await buildChild('test/durable/postgres/postgresJournalChild.ts');
    server = await startPostgres();
    raw = new pg.Pool({ connectionString: server.url, max: 2 });
    store = postgresJournal({ connectionString: server.url }, { schema });
    await store.read('nothing'); // the schema, before the children race to make it
    dir = mkdtempSync(join(tmpdir(), 'toolstream-postgres-sigkill-'));
  });
  afterAll(async () => {
    await store?.close();
    await raw?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await raw?.end();
    await server?.stop();
    child?.remove();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  function spawnDriver(n: number) {
    const turn = `kill ${n}`;
    const marks = join(dir, `marks-${n}`);
    mkdirSync(marks);
    const url = new URL(server.url);
    url.searchParams.set('application_name', `toolstream-sigkill-${n}`);
    const driver = startChild(child.script, ['drive', url.href, schema, marks, turn]);
    const ready = driver.nextLine();
    ready.catch(() => undefined); // a spare killed before it was ready: nobody waits for it
    return { turn, marks, driver, ready, name: `toolstream-sigkill-${n}` };
  }

  const backendsOf = async (application: string) =>
    (await raw.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [application])).rows[0]!.n;

  async function trial(spawned: ReturnType<typeof spawnDriver>, delay: number) {
    const { turn, marks } = spawned;
    const killed = await killConnected(spawned, delay, backendsOf);

    const journaled = foldTurn(await store.read(turn));
    const { before, context } = checkWriteAhead(journaled, marks, { turn, delay });
    const pipeline = crashPipeline(store, marks);
    if (journaled.size === 0) {
      expect(before.size, context).toBe(0);
      await expect(pipeline.resume(turn)).rejects.toMatchObject({ code: 'turn_unknown' });
      return { killed, unfinished: 0, refused: false };
    }
    const { rowCount } = await raw.query(`SELECT 1 FROM "${schema}".leases WHERE turn = $1 AND owner <> ''`, [turn]); // a released lease keeps its row (and epoch)
    const leased = rowCount === 1;
    if (leased) {
      await expect(pipeline.resume(turn)).rejects.toMatchObject({ code: 'turn_leased' });
      await raw.query(`UPDATE "${schema}".leases SET until = 0 WHERE turn = $1`, [turn]); // the clock moved past it
    }
    const { unfinished } = await checkResumed(pipeline, turn, journaled, before, marks, context);
    return { killed, unfinished, refused: leased };
  }

  it(`nothing that started runs twice, every call is answered — over ${KILLS} kills`, { timeout: 300_000 }, async () => {
    const { trials, kills, withUnfinished, refusals } = await killTrials(KILLS, spawnDriver, trial, MAX_DELAY_MS);
    console.log(`SIGKILL on postgresJournal: ${trials} children, ${kills} killed before their turn was done, ${withUnfinished} with calls started and unfinished, ${refusals} resumes refused while the lease was live`);
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    expect(withUnfinished).toBeGreaterThanOrEqual(KILLS / 5);
    expect(refusals).toBeGreaterThanOrEqual(KILLS / 2);
  });
});
