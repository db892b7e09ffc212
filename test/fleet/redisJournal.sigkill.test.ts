/**
 * A child process driving a durable turn on redisJournal is killed with SIGKILL at random moments, and
 * this process — another one, with its own connection — resumes the turn from Redis. The bodies mark
 * each run in a file of their own (`crashTools.ts`), so the test tells what ran, and how often,
 * whatever the journal says. Checked after every kill:
 * - write-ahead: a body that left its mark has its `started` record in Redis;
 * - while the dead driver's lease lives a resume is refused (`turn_leased`); past it, a resume takes over;
 * - every call is answered once, in order; a finished call is replayed as it was; a started,
 *   unfinished one is `outcome_unknown` and does not run again (the idempotent `fetch` re-runs once);
 *   one that never started runs now (or is `cancelled` behind an `outcome_unknown` exclusive call);
 * - no non-idempotent body ran twice, and a second resume runs nothing and answers the same.
 *
 * Redis runs a command the driver had sent when it died before it drops the connection, so the journal is
 * read only once the driver's connections are gone (each driver names them): read sooner, a call could
 * look unfinished and then be finished by the dead driver's last append (`postgres/sigkill.test.ts`, where a
 * COMMIT is slower, did fail that way once in CI).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { redisJournal, type RedisJournal } from '../../src/bullmq/index.js';
import { foldTurn } from '../../src/durable/turnState.js';
import { checkResumed, checkWriteAhead, killConnected, killTrials } from '../durable/sqlite/crashChecks.js';
import { crashPipeline, LEASE_MS } from '../durable/sqlite/crashTools.js';
import { buildChild, startChild } from '../durable/sqlite/processes.js';
import { REDIS_MISSING, redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';

requireRedis();
const available = redisAvailable();
/** Kills that landed before the turn was done (a child that finished first is not counted). */
const KILLS = Number(process.env.SIGKILL_RUNS ?? 50) / 2;
const MAX_DELAY_MS = 60;


describe.skipIf(!available)(`SIGKILL a process mid-turn, resume from another (real processes, ${available ? 'a real Redis' : REDIS_MISSING})`, () => {
  let child: Awaited<ReturnType<typeof buildChild>>;
  let redis: TestRedis;
  let raw: Redis;
  let store: RedisJournal;
  let dir: string;
  const prefix = `test:${randomUUID()}`;

  beforeAll(async () => {
    child = await buildChild('test/fleet/redisJournalChild.ts');
    redis = await startRedis();
    raw = new Redis(redis.url);
    store = redisJournal({ connection: redis.url, prefix });
    dir = mkdtempSync(join(tmpdir(), 'toolstream-redis-sigkill-'));
  });
  afterAll(async () => {
    await store?.close();
    if (raw !== undefined) {
      const keys = await raw.keys(`${prefix}:*`);
      if (keys.length > 0) await raw.del(...keys);
      await raw.quit();
    }
    await redis?.stop();
    child?.remove();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  function spawnDriver(n: number) {
    const turn = `kill ${n}`;
    const marks = join(dir, `marks-${n}`);
    mkdirSync(marks);
    const url = new URL(redis.url);
    url.searchParams.set('connectionName', `toolstream-sigkill-${n}`);
    const driver = startChild(child.script, ['drive', url.href, prefix, marks, turn]);
    const ready = driver.nextLine();
    ready.catch(() => undefined); // a spare killed before it was ready: nobody waits for it
    return { turn, marks, driver, ready, name: `toolstream-sigkill-${n}` };
  }

  const connectionsOf = async (name: string) => String(await raw.client('LIST')).split('\n').filter((line) => line.includes(` name=${name} `)).length;

  async function trial(spawned: ReturnType<typeof spawnDriver>, delay: number) {
    const { turn, marks } = spawned;
    const killed = await killConnected(spawned, delay, connectionsOf);

    const journaled = foldTurn(await store.read(turn));
    const { before, context } = checkWriteAhead(journaled, marks, { turn, delay });
    const pipeline = crashPipeline(store, marks);
    if (journaled.size === 0) {
      expect(before.size, context).toBe(0);
      await expect(pipeline.resume(turn)).rejects.toMatchObject({ code: 'turn_unknown' });
      return { killed, unfinished: 0, refused: false };
    }

    // The dead driver's lease (10 s, on its clock): refused while it lives; then this process's clock
    // is moved past it, rather than waiting, and the resume takes it over.
    const [owner, leasedUntil] = await raw.hmget(`${prefix}:{${turn}}:lease`, 'owner', 'until');
    const until = owner === null || owner === '' ? null : leasedUntil; // a released lease keeps its hash (and epoch)
    if (until !== null) await expect(pipeline.resume(turn)).rejects.toMatchObject({ code: 'turn_leased' });
    const realNow = Date.now.bind(Date);
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + (until === null ? 0 : LEASE_MS));
    try {
      const { unfinished } = await checkResumed(pipeline, turn, journaled, before, marks, context);
      return { killed, unfinished, refused: until !== null };
    } finally {
      clock.mockRestore();
    }
  }

  // About 10 s on an idle machine; each trial starts a node process, so on a busy one (load 25 on two
  // cores) it took over the suite's 120 s: a ceiling only a hang reaches.
  it(`nothing that started runs twice, every call is answered — over ${KILLS} kills`, { timeout: 300_000 }, async () => {
    const { trials, kills, withUnfinished, refusals } = await killTrials(KILLS, spawnDriver, trial, MAX_DELAY_MS);
    console.log(`SIGKILL on redisJournal: ${trials} children, ${kills} killed before their turn was done, ${withUnfinished} with calls started and unfinished, ${refusals} resumes refused while the lease was live`);
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    expect(withUnfinished).toBeGreaterThanOrEqual(KILLS / 5);
    expect(refusals).toBeGreaterThanOrEqual(KILLS / 2);
  });
});
