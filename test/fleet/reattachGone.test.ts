/**
 * Issue 23, finding 6: a resumed durable call re-attaches only to a job that exists. The state a SIGKILL
 * leaves — the journal holds `started` but no `finished` for a remote call — resumed after its finished
 * job was removed from Redis (as `keepJobsMs` does): a non-idempotent call is `outcome_unknown` and no
 * job is added (its body ran once, by the worker's log); an idempotent one is added again and runs again.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { durableJobId } from '../../src/bullmq/jobPayload.js';
import { createPipeline, memoryJournal, type JournalStore } from '../../src/index.js';
import { ProcessView } from '../support/crashes.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { sleep, sleepIdempotent } from './support/contracts.js';
import { until, useFleet, useQueueView, WITH_REDIS } from './support/fleet.js';

requireRedis();

const APPROVAL_SECRET = 'the re-attach tests of the fleet sign with this';

describe.skipIf(!redisAvailable())(`a resumed call whose job is gone (${WITH_REDIS})`, () => {
  const name = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 1, queues: [{ queue: name, concurrency: 2 }] });
  const view = useQueueView(suite, name);
  /** A new agent "process": its own remote tools (connections) over the journal it sees. */
  const agent = (journal: JournalStore) => createPipeline({ tools: suite.remote([sleep, sleepIdempotent], { queue: name }).tools, journal, approvalSecret: APPROVAL_SECRET });
  const runsOf = (callId: string) => suite.fleet.events().filter((event) => event.callId === callId && event.e === 'start');

  /**
   * A durable turn of one call whose agent dies once the body started (the journal holds `started`,
   * never `finished`); the job then finishes and is removed. Returns what a new agent resumes.
   */
  const crashThenRemoveJob = async (tool: string) => {
    const journal = memoryJournal();
    const dying = new ProcessView(journal);
    const turn = `turn-${randomUUID()}`;
    const id = `call-${randomUUID()}`;
    agent(dying).run([{ id, name: tool, args: { ms: 50 } }], { turn }).catch(() => undefined); // its journal dies under it
    await until(() => runsOf(id).length === 1, 5000, `the body of ${tool} to start`);
    dying.crash(turn);
    const jobId = durableJobId(turn, 0);
    let state = '';
    await until(() => (void view.queue.getJobState(jobId).then((s) => (state = s)), state === 'completed'), 5000, 'the job to complete');
    expect(await view.queue.remove(jobId)).toBe(1); // what keepJobsMs does once it passed
    return { journal, turn, id, jobId };
  };

  it('not idempotent: outcome_unknown, no job added, its body ran once', async () => {
    const { journal, turn, id, jobId } = await crashThenRemoveJob('sleep');
    const [result] = await agent(journal).resume(turn);
    expect(result).toMatchObject({ id, status: 'error', error: { code: 'outcome_unknown' } });
    expect(result!.content).toMatch(/its job is no longer in Redis .*not idempotent, so it was not run again/);
    expect(await view.queue.getJob(jobId)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 200)); // a job added by mistake would have started by now
    expect(runsOf(id)).toHaveLength(1);
  });

  it('by default a finished job is kept 1 hour (keepJobsMs): what a resume within it re-attaches to', async () => {
    const id = `kept-${randomUUID()}`;
    const [result] = await createPipeline({ tools: suite.remote([sleep], { queue: name }).tools }).run([{ id, name: 'sleep', args: { ms: 1 } }]);
    expect(result).toMatchObject({ status: 'ok' });
    const job = (await view.jobOfCall(id))!;
    expect(job.opts).toMatchObject({ removeOnComplete: { age: 3600 }, removeOnFail: { age: 3600 } });
    expect((job.data as { keepMs: number }).keepMs).toBe(3_600_000); // the streamed items and progress are kept as long
  });

  it('idempotent: added again, it runs again, and the call is ok', async () => {
    const { journal, turn, id } = await crashThenRemoveJob('sleep_idempotent');
    const [result] = await agent(journal).resume(turn);
    expect(result).toMatchObject({ id, status: 'ok' });
    await until(() => runsOf(id).length === 2, 5000, 'the job added again to run');
    // The value is one of its runs' — the new one's, or the first's: the agent's events reach a few
    // seconds back, and the first job's completion (same id, genuine, signed for this call) may answer first.
    expect(runsOf(id).map((run) => run.pid)).toContain((result!.value as { pid: number }).pid);
  });
});
