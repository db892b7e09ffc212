/**
 * Issue 24, finding 6: closing a fleet while Redis is away, or right after it came back (its clients
 * still waiting to reconnect). The user sees `remoteTools().close()` return within seconds — a call still
 * waiting answered `job_lost` — and every worker process close its worker and exit by itself; nothing is
 * left waiting on a connection that will never end (before, `close()` awaited BullMQ's `QueueEvents`
 * close, which waited without bound for a client that was reconnecting, and the process could not exit).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { remoteTools } from '../../src/bullmq/index.js';
import { createPipeline } from '../../src/index.js';
import { redisAvailable, requireRedis, startRedis, type OwnRedis } from '../support/redis.js';
import { closesWithin, expectClosedThemselves, stopAfterEach } from './support/closing.js';
import { sleep } from './support/contracts.js';
import { SECRET, stopProcess, testFleet, until, WITH_REDIS } from './support/fleet.js';

requireRedis();

const LOCK_MS = 1000;

describe.skipIf(!redisAvailable())(`closing a fleet when Redis is away or just back (${WITH_REDIS})`, () => {
  const made = stopAfterEach<OwnRedis>();

  /** Two workers and an agent that made one call (so every connection of both sides is open). */
  async function runningFleet() {
    const redis = (made.redis = await startRedis({ own: true }));
    const f = (made.fleet = testFleet(redis.url));
    const queue = `q-${randomUUID()}`;
    await f.start(2, [{ queue, concurrency: 2 }], { lockMs: LOCK_MS });
    const agent = (made.remote = remoteTools([sleep], { connection: { url: redis.url }, queue, prefix: f.prefix, secret: SECRET, reconcileMs: 200 }));
    const pipeline = createPipeline({ tools: agent.tools });
    expect((await pipeline.run([{ id: 'warm-up', name: 'sleep', args: { ms: 10 } }]))[0]).toMatchObject({ status: 'ok' });
    return { redis, f, agent, pipeline };
  }

  it('right after a restart: remoteTools and every worker close within seconds', async () => {
    const { redis, f, agent } = await runningFleet();
    await redis.restart(1500);
    const agentCloseMs = await closesWithin(() => agent.close(), 'remoteTools().close() right after Redis came back');
    const exits = await f.stop();
    console.log(`closed right after a Redis restart (down 1500 ms): remoteTools ${agentCloseMs.toFixed(0)} ms; workers ${exits.map((exit) => `${exit.ms.toFixed(0)} ms`).join(', ')}`);
    expectClosedThemselves(exits);
  });

  it('while Redis is away: remoteTools closes within seconds and answers its waiting call job_lost; every worker closes', async () => {
    const { redis, f, agent, pipeline } = await runningFleet();
    const run = pipeline.run([{ id: 'waiting', name: 'sleep', args: { ms: 10_000 } }]);
    await until(() => f.events().some((event) => event.callId === 'waiting' && event.e === 'start'), 5000, 'the body to start');
    const back = redis.restart(8000); // killed now, back in 8 s: everything below happens while it is away
    await new Promise((resolve) => setTimeout(resolve, 300));
    const agentCloseMs = await closesWithin(() => agent.close(), 'remoteTools().close() while Redis is away');
    expect((await run)[0]).toMatchObject({ status: 'error', error: { code: 'tool_error', cause: { code: 'job_lost' } } });
    // A worker closes once its bodies ended: this one's is stopped once its lock may have lapsed.
    await until(() => f.events().some((event) => event.callId === 'waiting' && event.e === 'end'), 5000, 'the body to stop');
    const exits = await Promise.all(f.workers.map(stopProcess)); // their keys are deleted once Redis is back (afterEach)
    console.log(`closed while Redis is away: remoteTools ${agentCloseMs.toFixed(0)} ms; workers ${exits.map((exit) => `${exit.ms.toFixed(0)} ms`).join(', ')}`);
    expectClosedThemselves(exits);
    await back;
  }, 30_000);
});
