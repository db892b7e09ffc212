import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { setFleetLimits } from '../../src/bullmq/index.js';
import { createPipeline } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { echo, sleep } from './support/contracts.js';
import { maxOverlap, useFleet, WITH_REDIS } from './support/fleet.js';

requireRedis();

describe.skipIf(!redisAvailable())(`no lost results, fleet limits (${WITH_REDIS})`, () => {
  const queue = `q-${randomUUID()}`;
  const limited = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 2, queues: [{ queue, concurrency: 8 }, { queue: limited, concurrency: 5 }] });

  it('with the events stream trimmed to nothing as it is written, every completion still arrives (by reconcile)', async () => {
    const remote = suite.remote([echo], { queue, reconcileMs: 100 });
    const trimmer = new Redis(suite.redis.url);
    const witness = new QueueEvents(queue, { connection: { url: suite.redis.url }, prefix: suite.fleet.prefix });
    let seen = 0;
    witness.on('completed', () => seen++);
    await witness.waitUntilReady();
    let trimming = true;
    const trim = (async () => {
      while (trimming) await trimmer.xtrim(`${suite.fleet.prefix}:${queue}:events`, 'MAXLEN', 0);
    })();
    try {
      const calls = Array.from({ length: 200 }, (_, i) => ({ id: `c${i}`, name: 'echo', args: { text: String(i) } }));
      const results = await createPipeline({ tools: remote.tools, concurrency: 50 }).run(calls);
      expect(results.map((r) => r.status)).toEqual(calls.map(() => 'ok'));
      expect(results.map((r) => (r.value as { echo: string }).echo)).toEqual(calls.map((c) => c.args.text));
      console.log(`events trimmed away: a reader saw ${seen} of 200 completions; all 200 results arrived`);
      expect(seen).toBeLessThan(200); // the events alone would have lost some
    } finally {
      trimming = false;
      await trim;
      await Promise.all([trimmer.quit(), witness.close(), remote.close()]);
    }
  });

  it('a waiting job removed behind the agent\'s back is answered job_lost, found by reconcile (no event says so)', async () => {
    const unserved = `q-${randomUUID()}`; // no worker serves it: the job waits until it is removed
    const remote = suite.remote([echo], { queue: unserved, reconcileMs: 100 });
    const other = new Queue(unserved, { connection: { url: suite.redis.url }, prefix: suite.fleet.prefix });
    try {
      const run = createPipeline({ tools: remote.tools }).run([{ id: 'lost', name: 'echo', args: { text: 'x' } }]);
      let waiting: string[] = [];
      while (waiting.length === 0) waiting = (await other.getJobs(['waiting'])).map((job) => job.id!);
      await other.remove(waiting[0]!);
      const [result] = await run;
      expect(result).toMatchObject({ status: 'error', error: { code: 'tool_error', cause: { code: 'job_lost' } } });
      expect(result!.content).toMatch(/no longer in Redis/);
    } finally {
      await Promise.all([other.obliterate({ force: true }).then(() => other.close()), remote.close()]);
    }
  });

  it('3 agent pipelines x 20 calls against one queue limited to 4 never run more than 4 bodies at once (on the workers)', async () => {
    await setFleetLimits({ connection: { url: suite.redis.url }, queue: limited, prefix: suite.fleet.prefix, concurrency: 4 });
    const agents = Array.from({ length: 3 }, () => suite.remote([sleep], { queue: limited }));
    try {
      const runs = agents.map((agent, a) =>
        createPipeline({ tools: agent.tools }).run(Array.from({ length: 20 }, (_, i) => ({ id: `limited-${a}-${i}`, name: 'sleep', args: { ms: 20 } }))),
      );
      const results = (await Promise.all(runs)).flat();
      expect(results.every((r) => r.status === 'ok')).toBe(true);
      const events = suite.fleet.events().filter((event) => event.callId.startsWith('limited-'));
      expect(events.filter((event) => event.e === 'start')).toHaveLength(60);
      const overlap = maxOverlap(events);
      console.log(`fleet limit 4: at most ${overlap} bodies ran at once (2 workers x 5, 3 agents x 20 calls)`);
      expect(overlap).toBeLessThanOrEqual(4);
      expect(overlap).toBeGreaterThanOrEqual(2);
    } finally {
      await Promise.all(agents.map((agent) => agent.close()));
      await setFleetLimits({ connection: { url: suite.redis.url }, queue: limited, prefix: suite.fleet.prefix, concurrency: null });
    }
  });
});
