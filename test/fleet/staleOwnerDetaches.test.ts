/**
 * A stalled agent that wakes after another process took its durable turn over (its run fails with
 * `lease_lost`, and the bodies it had in flight are aborted) must not cancel their remote jobs: the new
 * owner has re-attached to them, and waits for their results. Found by the chaos suite; real processes
 * (an agent and a worker, from the chaos suite's children) on a real Redis.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { redisJournal, remoteTools } from '../../src/bullmq/index.js';
import { ProcessPool } from '../chaos/chaosProcesses.js';
import { chaosPipeline, contracts, FLEET_SECRET, readBodyLines } from '../chaos/chaosTools.js';
import { buildChild } from '../durable/sqlite/processes.js';
import { REDIS_MISSING, redisAvailable, requireRedis, startRedis } from '../support/redis.js';
import { slowness } from '../support/timing.js';
import { until } from './support/fleet.js';

requireRedis();
const available = redisAvailable();

describe.skipIf(!available)(`a stalled agent that lost its turn detaches from its remote jobs (${available ? 'real processes, a real Redis' : REDIS_MISSING})`, () => {
  it('the new owner gets the result of the job the stale agent had started; its body ran once, not cancelled', async () => {
    // The body outlasts the stall, and the stall outlasts the new owner's take-over, on a busy machine too.
    const slow = slowness(); // not an integer: the body's `ms` is rounded (its schema takes integers)
    const [agentChild, workerChild] = await Promise.all([buildChild('test/chaos/agentChild.ts'), buildChild('test/chaos/workerChild.ts')]);
    const redis = await startRedis();
    const run = `stale-${randomUUID()}`;
    const logDir = mkdtempSync(join(tmpdir(), 'toolstream-stale-'));
    const stop = new AbortController();
    const agents = new ProcessPool('agent', agentChild.script, { kind: 'redis', url: redis.url, journalPrefix: `${run}:j`, fleetPrefix: run, queue: 'q' }, 1, stop.signal);
    const workers = new ProcessPool('worker', workerChild.script, { url: redis.url, prefix: run, queue: 'q', logDir, concurrency: 2 }, 1, stop.signal);
    // Made before the workers start: its start-up check finds no worker yet, which is expected here.
    const remote = remoteTools(contracts, { connection: { url: redis.url }, queue: 'q', prefix: run, secret: FLEET_SECRET, onWarning: () => undefined });
    const journal = redisJournal({ connection: redis.url, prefix: `${run}:j` });
    try {
      await Promise.all([agents.start(), workers.start()]);
      const [agent] = agents.ready();
      const sent = agent!.send({ id: 1, op: 'run', turn: 't', calls: [{ id: 'c0', name: 'charge', args: { ms: Math.round(3000 * slow) } }] });
      let early: unknown;
      void sent.end.then((end) => (early = end));
      await until(() => early !== undefined || readBodyLines(logDir).some((line) => line.e === 'start'), 5000, 'the body to start');
      expect(early, 'the agent answered before the body started').toBeUndefined();
      agents.stall(agent!, 1200 * slow); // past its 500 ms lease; it wakes while the body still runs
      await sleep(700);
      const results = await chaosPipeline(journal, remote.tools).resume('t'); // re-attaches to the job
      const stale = await sent.end;
      expect(stale).toMatchObject({ kind: 'reply', reply: { error: 'lease_lost' } });
      expect(results.map((result) => [result.id, result.status])).toEqual([['c0', 'ok']]);
      const bodies = readBodyLines(logDir).map((line) => line.e);
      expect(bodies.filter((e) => e === 'start')).toHaveLength(1);
      expect(bodies).not.toContain('abort');
    } finally {
      stop.abort();
      await agents.stopAll();
      await workers.stopAll();
      await remote.close();
      await journal.close();
      await redis.stop();
      agentChild.remove();
      workerChild.remove();
      rmSync(logDir, { recursive: true, force: true });
    }
  });
});
