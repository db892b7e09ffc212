import { randomUUID } from 'node:crypto';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteTools, setFleetLimits } from '../../src/bullmq/index.js';
import { createPipeline } from '../../src/index.js';
import { redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';
import { echo, sleep } from './support/contracts.js';
import { maxOverlap, SECRET, testFleet, WITH_REDIS, type TestFleet } from './support/fleet.js';

requireRedis();

describe.skipIf(!redisAvailable())(`no lost results, fleet limits (${WITH_REDIS})`, () => {
  let redis: TestRedis;
  let fleet: TestFleet;
  const queue = `q-${randomUUID()}`;
  const limited = `q-${randomUUID()}`;

  beforeAll(async () => {
    redis = await startRedis();
    fleet = testFleet(redis.url);
    await fleet.start(2, [{ queue, concurrency: 8 }, { queue: limited, concurrency: 5 }]);
  });
  afterAll(async () => {
    await fleet?.stop();
    await redis?.stop();
  });

  it('with the events stream trimmed to nothing as it is written, every completion still arrives (by reconcile)', async () => {
    const remote = remoteTools([echo], { connection: { url: redis.url }, queue, prefix: fleet.prefix, secret: SECRET, reconcileMs: 100 });
    const trimmer = new Redis(redis.url);
    const witness = new QueueEvents(queue, { connection: { url: redis.url }, prefix: fleet.prefix });
    let seen = 0;
    witness.on('completed', () => seen++);
    await witness.waitUntilReady();
    let trimming = true;
    const trim = (async () => {
      while (trimming) await trimmer.xtrim(`${fleet.prefix}:${queue}:events`, 'MAXLEN', 0);
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

  it('3 agent pipelines x 20 calls against one queue limited to 4 never run more than 4 bodies at once (on the workers)', async () => {
    await setFleetLimits({ connection: { url: redis.url }, queue: limited, prefix: fleet.prefix, concurrency: 4 });
    const agents = Array.from({ length: 3 }, () => remoteTools([sleep], { connection: { url: redis.url }, queue: limited, prefix: fleet.prefix, secret: SECRET }));
    try {
      const runs = agents.map((agent, a) =>
        createPipeline({ tools: agent.tools }).run(Array.from({ length: 20 }, (_, i) => ({ id: `limited-${a}-${i}`, name: 'sleep', args: { ms: 20 } }))),
      );
      const results = (await Promise.all(runs)).flat();
      expect(results.every((r) => r.status === 'ok')).toBe(true);
      const events = fleet.events().filter((event) => event.callId.startsWith('limited-'));
      expect(events.filter((event) => event.e === 'start')).toHaveLength(60);
      const overlap = maxOverlap(events);
      console.log(`fleet limit 4: at most ${overlap} bodies ran at once (2 workers x 5, 3 agents x 20 calls)`);
      expect(overlap).toBeLessThanOrEqual(4);
      expect(overlap).toBeGreaterThanOrEqual(2);
    } finally {
      await Promise.all(agents.map((agent) => agent.close()));
      await setFleetLimits({ connection: { url: redis.url }, queue: limited, prefix: fleet.prefix, concurrency: null });
    }
  });
});
