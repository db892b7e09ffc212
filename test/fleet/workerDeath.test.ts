import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteTools, type RemoteTools } from '../../src/bullmq/index.js';
import { createPipeline } from '../../src/index.js';
import { redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';
import { sleep, sleepIdempotent } from './support/contracts.js';
import { now } from './support/fleetTools.js';
import { SECRET, testFleet, until, WITH_REDIS, type TestFleet } from './support/fleet.js';

requireRedis();

/** Short locks keep the test fast; the bound scales with them (5 s by default → ≤ 10 s). */
const LOCK_MS = 1000;
const BOUND_MS = 2 * LOCK_MS;

describe.skipIf(!redisAvailable())(`a worker SIGKILLed mid-body (${WITH_REDIS})`, () => {
  let redis: TestRedis;
  let fleet: TestFleet;
  let remote: RemoteTools;
  const queue = `q-${randomUUID()}`;

  beforeAll(async () => {
    redis = await startRedis();
    fleet = testFleet(redis.url);
    await fleet.start(2, [{ queue, concurrency: 2 }], { lockMs: LOCK_MS });
    remote = remoteTools([sleep, sleepIdempotent], { connection: { url: redis.url }, queue, prefix: fleet.prefix, secret: SECRET, reconcileMs: 200 });
  });
  afterAll(async () => {
    await remote?.close();
    await fleet?.stop();
    await redis?.stop();
  });

  const starts = (callId: string) => fleet.events().filter((event) => event.callId === callId && event.e === 'start');

  /** Runs `tool` and SIGKILLs the worker process that started it; the result, and when the death was noticed. */
  async function killMidBody(tool: string, id: string) {
    const run = createPipeline({ tools: remote.tools }).run([{ id, name: tool, args: { ms: 1500 } }]);
    await until(() => starts(id).length === 1, 5000, `${id} to start`);
    const victim = fleet.workers.find((child) => child.pid === starts(id)[0]!.pid)!;
    const killedAt = now();
    victim.kill('SIGKILL');
    let answeredAt = Infinity;
    const [result] = await run.then((results) => ((answeredAt = now()), results));
    return { result: result!, killedAt, answeredAt };
  }

  it('an idempotent tool\'s job runs once more, on the other worker, and the call is ok', async () => {
    const id = `idem-${randomUUID()}`;
    const { result, killedAt } = await killMidBody('sleep_idempotent', id);
    expect(result).toMatchObject({ status: 'ok' });
    const [first, second] = starts(id);
    expect(starts(id)).toHaveLength(2);
    expect(second!.pid).not.toBe(first!.pid);
    expect((result.value as { pid: number }).pid).toBe(second!.pid);
    console.log(`worker death noticed (the job started again) ${(second!.t - killedAt).toFixed(0)} ms after SIGKILL (lockMs ${LOCK_MS}, bound ${BOUND_MS})`);
    expect(second!.t - killedAt).toBeLessThan(BOUND_MS + 500);
  });

  it('any other tool\'s call is outcome_unknown, and its body ran exactly once', async () => {
    await fleet.start(1, [{ queue, concurrency: 2 }], { lockMs: LOCK_MS }); // two alive again
    const id = `once-${randomUUID()}`;
    const { result, killedAt, answeredAt } = await killMidBody('sleep', id);
    expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown' } });
    expect(result.error!.message).toContain('it is not idempotent, so it was not run again');
    console.log(`worker death answered outcome_unknown ${(answeredAt - killedAt).toFixed(0)} ms after SIGKILL (lockMs ${LOCK_MS}, bound ${BOUND_MS})`);
    expect(answeredAt - killedAt).toBeLessThan(BOUND_MS + 500);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(starts(id)).toHaveLength(1);
  });
});
