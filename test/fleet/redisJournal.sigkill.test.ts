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
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { redisJournal, type RedisJournal } from '../../src/bullmq/index.js';
import { foldTurn } from '../../src/durable/turnState.js';
import type { ToolResult } from '../../src/index.js';
import { crashPipeline, crashTurn, LEASE_MS } from '../durable/sqlite/crashTools.js';
import { buildChild, startChild } from '../durable/sqlite/processes.js';
import { REDIS_MISSING, redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';

requireRedis();
const available = redisAvailable();
/** Kills that landed before the turn was done (a child that finished first is not counted). */
const KILLS = Number(process.env.SIGKILL_RUNS ?? 50) / 2;
const MAX_DELAY_MS = 60;

const outline = (results: readonly ToolResult[]) => results.map((r) => ({ id: r.id, status: r.status, code: r.error?.code, content: r.content }));
const runsIn = (marks: string) => new Map(readdirSync(marks).map((id) => [id, readFileSync(join(marks, id), 'utf8').split('\n').length - 1]));

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
    const driver = startChild(child.script, ['drive', redis.url, prefix, marks, turn]);
    const ready = driver.nextLine();
    ready.catch(() => undefined); // a spare killed before it was ready: nobody waits for it
    return { turn, marks, driver, ready };
  }

  async function trial(spawned: ReturnType<typeof spawnDriver>, delay: number) {
    const { turn, marks, driver } = spawned;
    expect(await spawned.ready).toBe('ready');
    driver.process.stdin.write('go\n');
    await sleep(delay);
    driver.process.kill('SIGKILL');
    const { signal, code, stderr } = await driver.exited;
    const killed = signal === 'SIGKILL';
    expect(killed || code === 0, stderr).toBe(true);

    const journaled = foldTurn(await store.read(turn));
    const before = runsIn(marks);
    const context = JSON.stringify({ turn, delay, journaled: [...journaled.values()].map((c) => [c.id, c.started, c.finished?.status]), before: [...before] });
    for (const [id, count] of before) {
      expect(count, context).toBeLessThanOrEqual(1);
      expect(journaled.get(Number(id.slice(1)))?.started, `${id} ran without its started record: ${context}`).toBe(true);
    }
    const pipeline = crashPipeline(store, marks);
    if (journaled.size === 0) {
      expect(before.size, context).toBe(0);
      await expect(pipeline.resume(turn)).rejects.toMatchObject({ code: 'turn_unknown' });
      return { killed, unfinished: 0, refused: false };
    }

    // The dead driver's lease (10 s, on its clock): refused while it lives; then this process's clock
    // is moved past it, rather than waiting, and the resume takes it over.
    const until = await raw.hget(`${prefix}:{${turn}}:lease`, 'until');
    if (until !== null) await expect(pipeline.resume(turn)).rejects.toMatchObject({ code: 'turn_leased' });
    const realNow = Date.now.bind(Date);
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + (until === null ? 0 : LEASE_MS));
    let results: readonly ToolResult[];
    try {
      results = await pipeline.resume(turn);
    } finally {
      clock.mockRestore();
    }
    const after = runsIn(marks);
    expect(results.map((r) => r.id), context).toEqual(crashTurn.map((c) => c.id));
    let unfinished = 0;
    for (const [index, call] of crashTurn.entries()) {
      const result = results[index]!;
      const was = journaled.get(index);
      const ranBefore = before.get(call.id) ?? 0;
      const ranAfter = after.get(call.id) ?? 0;
      const idempotent = call.name === 'fetch';
      const where = `${call.id} (${call.name}): ${context} → ${JSON.stringify(outline([result]))}`;
      if (was?.finished !== undefined) {
        expect({ status: result.status, content: result.content }, where).toEqual({ status: was.finished.status, content: was.finished.content });
        expect(ranAfter, where).toBe(ranBefore);
      } else if (was?.started === true) {
        unfinished++;
        if (idempotent) {
          expect([result.status, ranAfter], where).toEqual(['ok', ranBefore + 1]);
        } else {
          expect([result.error?.code, ranAfter], where).toEqual(['outcome_unknown', ranBefore]);
        }
      } else if (result.status === 'ok') {
        expect(ranAfter, where).toBe(1);
      } else {
        const unknownExclusive = results.slice(0, index).some((r) => r.name === 'email' && r.error?.code === 'outcome_unknown');
        expect({ status: result.status, unknownExclusive, ranAfter }, where).toEqual({ status: 'cancelled', unknownExclusive: true, ranAfter: 0 });
      }
      if (!idempotent) expect(ranAfter, where).toBeLessThanOrEqual(1);
    }
    expect(outline(await pipeline.resume(turn))).toEqual(outline(results));
    expect(runsIn(marks)).toEqual(after);
    return { killed, unfinished, refused: until !== null };
  }

  it(`nothing that started runs twice, every call is answered — over ${KILLS} kills`, async () => {
    let kills = 0;
    let trials = 0;
    let withUnfinished = 0;
    let refusals = 0;
    const covered = () => kills >= KILLS && withUnfinished >= KILLS / 5 && refusals >= KILLS / 2;
    let next = spawnDriver(trials++);
    try {
      while (!covered() && trials < KILLS * 6) {
        const current = next;
        next = spawnDriver(trials++); // starts while this trial runs
        const outcome = await trial(current, Math.random() * MAX_DELAY_MS);
        if (outcome.killed) kills++;
        if (outcome.unfinished > 0) withUnfinished++;
        if (outcome.refused) refusals++;
      }
    } finally {
      next.driver.process.kill('SIGKILL'); // the spare, never told to go
      await next.driver.exited;
    }
    console.log(`SIGKILL on redisJournal: ${trials} children, ${kills} killed before their turn was done, ${withUnfinished} with calls started and unfinished, ${refusals} resumes refused while the lease was live`);
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    expect(withUnfinished).toBeGreaterThanOrEqual(KILLS / 5);
    expect(refusals).toBeGreaterThanOrEqual(KILLS / 2);
  });
});
