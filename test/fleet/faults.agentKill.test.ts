/**
 * The agent process SIGKILLed mid-turn, and the turn resumed from another process on redisJournal.
 * A child agent (`support/agentProcess.ts`) runs a durable turn of remote tools (`support/fleetAgent.ts`:
 * one idempotent contract, one not; two calls at a time) against 2 worker processes, and dies while two
 * jobs are active: two calls finished before, two were not dispatched yet. This process — its own
 * connections, journal client and remote tools — resumes the turn once the dead agent's lease lapsed
 * (refused while it lives): the finished calls are replayed from the journal, the two started calls
 * re-attach to the jobs that exist (whatever their contract says of idempotency), and the last two run
 * now. Every body ran exactly once (the workers' side-effect logs), every call is answered, and a second
 * resume runs nothing and answers the same.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisJournal, type RedisJournal } from '../../src/bullmq/index.js';
import { foldTurn } from '../../src/durable/turnState.js';
import type { ToolResult } from '../../src/index.js';
import { redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';
import { AGENT_LEASE_MS, agentTurn, fleetAgent, type AgentConfig } from './support/fleetAgent.js';
import { startProcess, stopProcess, testFleet, until, WITH_REDIS, type TestFleet } from './support/fleet.js';

requireRedis();

const AGENT = resolve(import.meta.dirname, 'support/agentProcess.ts');
const outline = (results: readonly ToolResult[]) => results.map((r) => ({ id: r.id, status: r.status, code: r.error?.code, content: r.content }));

describe.skipIf(!redisAvailable())(`the agent SIGKILLed mid-turn, resumed from another process (${WITH_REDIS})`, () => {
  let redis: TestRedis;
  let fleet: TestFleet;
  let journal: RedisJournal;
  let child: ChildProcess | undefined;
  const queue = `q-${randomUUID()}`;
  const journalPrefix = `tsjournal-${randomUUID()}`;

  beforeAll(async () => {
    redis = await startRedis();
    fleet = testFleet(redis.url);
    await fleet.start(2, [{ queue, concurrency: 2 }]);
    journal = redisJournal({ connection: redis.url, prefix: journalPrefix });
  });
  afterAll(async () => {
    if (child !== undefined) await stopProcess(child);
    await journal?.close();
    if (redis !== undefined) {
      const raw = new Redis(redis.url);
      const keys = await raw.keys(`${journalPrefix}:*`);
      if (keys.length > 0) await raw.del(...keys);
      await raw.quit();
    }
    await fleet?.stop();
    await redis?.stop();
  });

  it('finished calls replayed, active jobs re-attached, the rest run: every body exactly once, every call answered', async () => {
    const config: AgentConfig = { url: redis.url, prefix: fleet.prefix, queue, journalPrefix, turn: `turn-${randomUUID()}` };
    const starts = (id: string) => fleet.events().filter((event) => event.callId === id && event.e === 'start');
    const ended = (id: string) => fleet.events().some((event) => event.callId === id && event.e === 'end');

    child = await startProcess(AGENT, { FLEET_AGENT: JSON.stringify(config) });
    const exited = new Promise<NodeJS.Signals | null>((done) => child!.once('exit', (_code, signal) => done(signal)));
    // Killed while the long pair runs on the workers (the quick pair finished, the last pair waits in the agent).
    await until(() => starts('long').length === 1 && starts('long-idem').length === 1, 10_000, 'the long pair to start');
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    child = undefined;

    const journaled = foldTurn(await journal.read(config.turn));
    const where = [...journaled.values()].map((call) => `${call.id}: ${call.finished?.status ?? (call.started ? 'started' : 'waiting')}`).join(', ');
    expect(where).toBe('quick-idem: ok, quick: ok, long: started, long-idem: started, late: waiting, late-idem: waiting');
    const killedWhileActive = !ended('long') && !ended('long-idem');
    expect(killedWhileActive, 'the kill landed while both long jobs were active').toBe(true);

    // This process takes over: refused while the dead agent's lease lives, then after it lapsed.
    const resumer = fleetAgent(config, journal);
    try {
      await expect(resumer.pipeline.resume(config.turn)).rejects.toMatchObject({ code: 'turn_leased' });
      await new Promise((done) => setTimeout(done, AGENT_LEASE_MS + 200));
      const results = await resumer.pipeline.resume(config.turn);

      expect(results.map((r) => r.id)).toEqual(agentTurn.map((call) => call.id));
      expect(results.map((r) => r.status)).toEqual(agentTurn.map(() => 'ok'));
      for (const id of ['quick-idem', 'quick']) {
        const finished = [...journaled.values()].find((call) => call.id === id)!.finished!;
        expect(results.find((r) => r.id === id)!.content, `${id} is replayed`).toEqual(finished.content);
      }
      for (const call of agentTurn) {
        expect(starts(call.id), `${call.id}'s body ran once`).toHaveLength(1);
        // The answer is the job's, from the worker process that ran that one body.
        expect(results.find((r) => r.id === call.id)!.content, call.id).toBe(JSON.stringify({ pid: starts(call.id)[0]!.pid }));
      }

      const again = await resumer.pipeline.resume(config.turn);
      expect(outline(again)).toEqual(outline(results));
      for (const call of agentTurn) expect(starts(call.id)).toHaveLength(1);
    } finally {
      await resumer.remote.close();
    }
  }, 60_000);
});
