import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RemoteTools } from '../../src/bullmq/index.js';
import { createPipeline } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { stretched } from '../support/timing.js';
import { sleep, sleepIdempotent } from './support/contracts.js';
import { now } from './support/fleetTools.js';
import { until, useFleet, WITH_REDIS } from './support/fleet.js';

requireRedis();

/** Short locks keep the test fast; the bound scales with them (5 s by default → ≤ 10 s). */
const LOCK_MS = 1000;
const BOUND_MS = 2 * LOCK_MS;

describe.skipIf(!redisAvailable())(`a worker SIGKILLed mid-body (${WITH_REDIS})`, () => {
  const queue = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 2, queues: [{ queue, concurrency: 2 }], lockMs: LOCK_MS });
  let remote: RemoteTools;
  beforeAll(() => {
    remote = suite.remote([sleep, sleepIdempotent], { queue, reconcileMs: 200 });
  });

  const starts = (callId: string) => suite.fleet.events().filter((event) => event.callId === callId && event.e === 'start');

  /** Runs `tool` and SIGKILLs the worker process that started it; the result, and when the death was noticed. */
  async function killMidBody(tool: string, id: string) {
    const run = createPipeline({ tools: remote.tools }).run([{ id, name: tool, args: { ms: 1500 } }]);
    await until(() => starts(id).length === 1, 5000, `${id} to start`);
    const victim = suite.fleet.workers.find((child) => child.pid === starts(id)[0]!.pid)!;
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
    expect(second!.t - killedAt).toBeLessThan(BOUND_MS + stretched(1500)); // slack for timers and processes, more on a loaded machine
  });

  it('any other tool\'s call is outcome_unknown, and its body ran exactly once', async () => {
    await suite.fleet.start(1, [{ queue, concurrency: 2 }], { lockMs: LOCK_MS }); // two alive again
    const id = `once-${randomUUID()}`;
    const { result, killedAt, answeredAt } = await killMidBody('sleep', id);
    expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown' } });
    expect(result.error!.message).toContain('it is not idempotent, so it was not run again');
    console.log(`worker death answered outcome_unknown ${(answeredAt - killedAt).toFixed(0)} ms after SIGKILL (lockMs ${LOCK_MS}, bound ${BOUND_MS})`);
    expect(answeredAt - killedAt).toBeLessThan(BOUND_MS + stretched(1500));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(starts(id)).toHaveLength(1);
  });
});
