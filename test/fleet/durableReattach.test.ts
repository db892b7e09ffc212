import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPipeline, memoryJournal, type JournalStore } from '../../src/index.js';
import { ProcessView } from '../support/crashes.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { keyedSlow, sleep } from './support/contracts.js';
import { until, useFleet, WITH_REDIS } from './support/fleet.js';

requireRedis();

const APPROVAL_SECRET = 'the durable turns of the fleet test sign with this';

describe.skipIf(!redisAvailable())(`a durable turn re-attaches to its remote job after the agent crashed (${WITH_REDIS})`, () => {
  const queue = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 1, queues: [{ queue, concurrency: 2 }] });
  /** A new agent "process": its own remote tools (connections) over the journal it sees. */
  const agent = (journal: JournalStore) => createPipeline({ tools: suite.remote([sleep, keyedSlow], { queue }).tools, journal, approvalSecret: APPROVAL_SECRET });

  const runsOf = (callId: string) => suite.fleet.events().filter((event) => event.callId === callId && event.e === 'start');

  /**
   * Runs a durable turn of one call on an agent whose journal dies under it once the body logged its
   * start (a `keyed_slow` first attempt fails before it logs); returns what a new agent resumes.
   */
  const crashOnceStarted = async (name: string, args: Record<string, unknown>) => {
    const journal = memoryJournal();
    const dying = new ProcessView(journal);
    const turn = `turn-${randomUUID()}`;
    const id = `call-${randomUUID()}`;
    agent(dying).run([{ id, name, args }], { turn }).catch(() => undefined); // its journal dies under it
    await until(() => runsOf(id).length === 1, 5000, `the body of ${name} to start`);
    dying.crash(turn);
    return { journal, turn, id };
  };

  for (const when of ['while the job runs', 'after the job finished'] as const) {
    it(`resumed ${when}: the same job, its body ran once, its result`, async () => {
      const { journal, turn, id } = await crashOnceStarted('sleep', { ms: 400 });
      if (when === 'after the job finished') await until(() => suite.fleet.events().some((event) => event.callId === id && event.e === 'end'), 5000, 'the body to end');

      const [result] = await agent(journal).resume(turn);
      expect(result).toMatchObject({ id, status: 'ok', value: { pid: runsOf(id)[0]!.pid } }); // not outcome_unknown: re-attached
      expect(runsOf(id)).toHaveLength(1);
    });
  }

  it('resumed while a retried attempt runs: that attempt\'s job, its body ran once, its result', async () => {
    const { journal, turn, id } = await crashOnceStarted('keyed_slow', { ms: 400 }); // during attempt 2

    const [result] = await agent(journal).resume(turn);
    expect(result).toMatchObject({ id, status: 'ok', value: { pid: runsOf(id)[0]!.pid } });
    expect(runsOf(id)).toHaveLength(1); // re-attached to attempt 2's job, not run a third time
    // The resumed call walks its attempts again by their job ids: attempt 1's known failure (then its
    // backoff), then attempt 2's job, so the result still says what happened.
    expect(result!.attempts).toBe(2);
    expect(result!.trace.filter((entry) => entry.event === 'attempt_failed')).toMatchObject([{ attempt: 1 }]);
  });
});
