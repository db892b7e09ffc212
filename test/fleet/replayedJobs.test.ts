/**
 * Issue 23, finding 4: a replayed job does not run its body again. A signed job of a non-idempotent
 * tool, removed and re-added under its id, or retried from completed with its attempt counters reset,
 * finds its call's run record and is refused (`outcome_unknown`); a job replayed after its signed expiry
 * is refused (`timeout`) whatever its tool; a payload of another version is refused by name. Checked
 * from the bodies' own side-effect logs, on two real worker processes.
 */
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { RemoteTools } from '../../src/bullmq/index.js';
import { createPipeline } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { sleep, sleepIdempotent } from './support/contracts.js';
import { useFleet, useQueueView, WITH_REDIS } from './support/fleet.js';

requireRedis();

describe.skipIf(!redisAvailable())(`a replayed job does not run its body again (${WITH_REDIS})`, () => {
  const name = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 2, queues: [{ queue: name, concurrency: 2 }] });
  const view = useQueueView(suite, name);
  const { outcomeOf } = view;

  const starts = (callId: string) => suite.fleet.events().filter((event) => event.callId === callId && event.e === 'start');

  /** Runs one call through the fleet (it must be ok) and returns its finished job. */
  async function ranOnce(remote: RemoteTools, tool: string): Promise<Job> {
    const id = `${tool}-${randomUUID()}`;
    const [result] = await createPipeline({ tools: remote.tools }).run([{ id, name: tool, args: { ms: 1 } }]);
    expect(result).toMatchObject({ status: 'ok' });
    expect(starts(id)).toHaveLength(1);
    return (await view.jobOfCall(id))!;
  }

  const callIdOf = (job: Job) => (job.data as { callId: string }).callId;

  it('a signed job removed and re-added under its id: refused outcome_unknown, its body ran once', async () => {
    const job = await ranOnce(suite.remote([sleep], { queue: name }), 'sleep');
    await job.remove();
    const again = await view.queue.add(job.name, job.data, { jobId: job.id! });
    expect(await outcomeOf(again)).toMatch(/^\[outcome_unknown\] a body already ran for this call \(this job ran it before\), and it is not idempotent, so it was not run again/);
    expect(starts(callIdOf(job))).toHaveLength(1);
  });

  it('a job retried from completed with its attempt counters reset: refused outcome_unknown, its body ran once', async () => {
    const job = await ranOnce(suite.remote([sleep], { queue: name }), 'sleep');
    await job.retry('completed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    expect(await outcomeOf(job)).toMatch(/^\[outcome_unknown\] a body already ran for this call/);
    expect(starts(callIdOf(job))).toHaveLength(1);
  });

  it('a job replayed after its signed expiry (an idempotent tool: no run record) is refused timeout; its body ran once', async () => {
    const job = await ranOnce(suite.remote([sleepIdempotent], { queue: name, jobExpiryMs: 1000 }), 'sleep_idempotent');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await job.remove();
    const again = await view.queue.add(job.name, job.data, { jobId: job.id! });
    expect(await outcomeOf(again)).toMatch(/^\[timeout\] it expired before a worker could start it/);
    expect(starts(callIdOf(job))).toHaveLength(1);
  });

  it('a payload of version 1 (an agent of an older toolstream, mid-upgrade) is refused by version, and nothing runs', async () => {
    const callId = `v1-${randomUUID()}`;
    const v1 = { v: 1, tool: 'sleep', args: { ms: 1 }, callId, turn: null, index: 0, key: `tsk-${randomUUID()}`, deadline: null, keepMs: 60_000, sig: 'A'.repeat(43) };
    const reason = await outcomeOf(await view.queue.add('sleep', v1, { jobId: `v1-${randomUUID()}` }));
    expect(reason).toMatch(/^\[refused\] Job v1-.* refused by the worker: its payload is format version 1, and this worker verifies version 2 only/);
    expect(reason).not.toMatch(/\nsig /); // unsigned: the older agent reads it as it always did
    expect(starts(callId)).toHaveLength(0);
  });
});
