/**
 * Issue 24, finding 7: an idempotent tool's job whose workers die one after the other (SIGKILL mid-body,
 * real worker processes). The workers' `maxReruns` (1 by default) says how many times it runs again. The
 * user sees, with the default, the job run twice and then its call fail as a `tool_error` whose cause is
 * a `RemoteToolError` with code `workers_lost`, saying how many times its workers were lost (before,
 * BullMQ's own "job stalled more than allowable limit"); with `maxReruns: 2` the third worker runs it
 * and the call is `ok`.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RemoteToolError, remoteTools } from '../../src/bullmq/index.js';
import { createPipeline, type ToolResult } from '../../src/index.js';
import { redisAvailable, requireRedis, startRedis } from '../support/redis.js';
import { stopAfterEach } from './support/closing.js';
import { sleepIdempotent } from './support/contracts.js';
import { SECRET, testFleet, until, WITH_REDIS, type WorkerOptions } from './support/fleet.js';

requireRedis();

const LOCK_MS = 1000;

describe.skipIf(!redisAvailable())(`an idempotent job whose workers keep dying (${WITH_REDIS})`, () => {
  const made = stopAfterEach();

  /** Three workers; the call's first two runs each have their worker SIGKILLed mid-body. */
  async function killTwice(options: WorkerOptions): Promise<{ result: ToolResult; runs: number }> {
    const redis = (made.redis = await startRedis());
    const f = (made.fleet = testFleet(redis.url));
    const queue = `q-${randomUUID()}`;
    await f.start(3, [{ queue, concurrency: 1 }], { lockMs: LOCK_MS, ...options });
    const remote = (made.remote = remoteTools([sleepIdempotent], { connection: { url: redis.url }, queue, prefix: f.prefix, secret: SECRET, reconcileMs: 200 }));
    const id = `call-${randomUUID()}`;
    const run = createPipeline({ tools: remote.tools }).run([{ id, name: 'sleep_idempotent', args: { ms: 1500 } }]);
    const starts = () => f.events().filter((event) => event.callId === id && event.e === 'start');
    for (const nth of [1, 2]) {
      await until(() => starts().length === nth, 10_000, `run ${nth} to start`);
      f.workers.find((child) => child.pid === starts()[nth - 1]!.pid)!.kill('SIGKILL');
    }
    const [result] = (await run) as [ToolResult];
    await new Promise((resolve) => setTimeout(resolve, 300)); // a run that could still start would by now
    return { result, runs: starts().length };
  }

  it('by default it runs again once: lost twice, its call is workers_lost, saying so', async () => {
    const { result, runs } = await killTwice({});
    expect(runs).toBe(2);
    expect(result).toMatchObject({ status: 'error', error: { code: 'tool_error' } });
    const cause = (result.error as { cause?: unknown }).cause;
    expect(cause).toBeInstanceOf(RemoteToolError);
    expect(cause).toMatchObject({ code: 'workers_lost' });
    expect(result.content).toContain('lost 2 times');
    expect(result.content).toContain('more than the 1 run again the workers allow (maxReruns)');
  }, 30_000);

  it('with maxReruns: 2 the third worker runs it, and the call is ok', async () => {
    const { result, runs } = await killTwice({ maxReruns: 2 });
    expect(runs).toBe(3);
    expect(result).toMatchObject({ status: 'ok' });
  }, 30_000);
});
