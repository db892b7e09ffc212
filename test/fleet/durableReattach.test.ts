import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteTools, type RemoteTools } from '../../src/bullmq/index.js';
import { createPipeline, memoryJournal, type JournalStore } from '../../src/index.js';
import { ProcessView } from '../support/crashes.js';
import { redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';
import { sleep } from './support/contracts.js';
import { SECRET, testFleet, until, WITH_REDIS, type TestFleet } from './support/fleet.js';

requireRedis();

const APPROVAL_SECRET = 'the durable turns of the fleet test sign with this';

describe.skipIf(!redisAvailable())(`a durable turn re-attaches to its remote job after the agent crashed (${WITH_REDIS})`, () => {
  let redis: TestRedis;
  let fleet: TestFleet;
  const queue = `q-${randomUUID()}`;
  const agents: RemoteTools[] = [];
  /** A new agent "process": its own remote tools (connections) over the journal it sees. */
  const agent = (journal: JournalStore) => {
    const remote = remoteTools([sleep], { connection: { url: redis.url }, queue, prefix: fleet.prefix, secret: SECRET });
    agents.push(remote);
    return createPipeline({ tools: remote.tools, journal, approvalSecret: APPROVAL_SECRET });
  };

  beforeAll(async () => {
    redis = await startRedis();
    fleet = testFleet(redis.url);
    await fleet.start(1, [{ queue, concurrency: 2 }]);
  });
  afterAll(async () => {
    await Promise.all(agents.map((remote) => remote.close()));
    await fleet?.stop();
    await redis?.stop();
  });

  const runsOf = (callId: string) => fleet.events().filter((event) => event.callId === callId && event.e === 'start');

  for (const when of ['while the job runs', 'after the job finished'] as const) {
    it(`resumed ${when}: the same job, its body ran once, its result`, async () => {
      const journal = memoryJournal();
      const dying = new ProcessView(journal);
      const turn = `turn-${randomUUID()}`;
      const id = `call-${randomUUID()}`;
      const first = agent(dying).run([{ id, name: 'sleep', args: { ms: 400 } }], { turn });
      first.catch(() => undefined); // its journal dies under it
      await until(() => runsOf(id).length === 1, 5000, 'the body to start');
      dying.crash(turn);
      if (when === 'after the job finished') await until(() => fleet.events().some((event) => event.callId === id && event.e === 'end'), 5000, 'the body to end');

      const [result] = await agent(journal).resume(turn);
      expect(result).toMatchObject({ id, status: 'ok', value: { pid: runsOf(id)[0]!.pid } }); // not outcome_unknown: re-attached
      expect(runsOf(id)).toHaveLength(1);
    });
  }
});
