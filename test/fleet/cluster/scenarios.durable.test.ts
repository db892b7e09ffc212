/**
 * A durable turn with remote tools on a Redis Cluster, its agent process SIGKILLed mid-turn and the turn
 * resumed from another process (issue 29), as test/fleet/faults.agentKill.test.ts on a single Redis: the
 * journal (redisJournal, a hash-tagged prefix) and the fleet both on an ioredis `Cluster`. The finished
 * calls are replayed from the journal, the two started calls re-attach to their jobs, the last two run
 * now: every body ran exactly once, every call is answered, and a second resume runs nothing.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisJournal, type RedisJournal } from '../../../src/bullmq/index.js';
import { foldTurn } from '../../../src/durable/turnState.js';
import type { ToolResult } from '../../../src/index.js';
import { clusterPrefix, redisClusterAvailable, requireRedisCluster, startRedisCluster, type RedisClusterHandle } from '../../support/redisCluster.js';
import { AGENT_LEASE_MS, agentTurn } from '../support/fleetAgent.js';
import { startProcess, stopProcess, until } from '../support/fleet.js';
import { CLUSTER_OPTIONS, clusterAgent, type ClusterAgentConfig, clusterFleet, type ClusterFleet, deletePrefixed, WITH_CLUSTER } from './scenarios.support.js';

requireRedisCluster();

const AGENT = resolve(import.meta.dirname, 'scenarios.agent.ts');
const outline = (results: readonly ToolResult[]) => results.map((r) => ({ id: r.id, status: r.status, code: r.error?.code, content: r.content }));

describe.skipIf(!redisClusterAvailable())(`a durable turn on a Redis Cluster, its agent SIGKILLed, resumed from another process (${WITH_CLUSTER})`, () => {
  let handle: RedisClusterHandle;
  let fleet: ClusterFleet;
  let cluster: Cluster;
  let journal: RedisJournal;
  let child: ChildProcess | undefined;
  const queue = `q-${randomUUID()}`;
  const journalPrefix = clusterPrefix('journal');

  beforeAll(async () => {
    handle = await startRedisCluster();
    fleet = clusterFleet(handle);
    await fleet.start(2, [{ queue, concurrency: 2 }]);
    cluster = handle.cluster(CLUSTER_OPTIONS);
    journal = redisJournal({ connection: cluster, prefix: journalPrefix });
  });
  afterAll(async () => {
    if (child !== undefined) await stopProcess(child);
    await journal?.close();
    if (cluster !== undefined) {
      await deletePrefixed(cluster, journalPrefix);
      cluster.disconnect();
    }
    await fleet?.stop();
    await handle?.stop();
  });

  it('finished calls replayed, active jobs re-attached, the rest run: every body exactly once, every call answered', async () => {
    const config: ClusterAgentConfig = { nodes: handle.nodes, prefix: fleet.prefix, queue, journalPrefix, turn: `turn-${randomUUID()}` };
    const starts = (id: string) => fleet.events().filter((event) => event.callId === id && event.e === 'start');
    const ended = (id: string) => fleet.events().some((event) => event.callId === id && event.e === 'end');

    child = await startProcess(AGENT, { CLUSTER_AGENT: JSON.stringify(config) });
    const exited = new Promise<NodeJS.Signals | null>((done) => child!.once('exit', (_code, signal) => done(signal)));
    await until(() => starts('long').length === 1 && starts('long-idem').length === 1, 10_000, 'the long pair to start');
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    child = undefined;

    const journaled = foldTurn(await journal.read(config.turn));
    const where = [...journaled.values()].map((call) => `${call.id}: ${call.finished?.status ?? (call.started ? 'started' : 'waiting')}`).join(', ');
    expect(where).toBe('quick-idem: ok, quick: ok, long: started, long-idem: started, late: waiting, late-idem: waiting');
    expect(!ended('long') && !ended('long-idem'), 'the kill landed while both long jobs were active').toBe(true);

    // This process takes over, on its own Cluster: refused while the dead agent's lease lives, then after it lapsed.
    const resumer = clusterAgent(config, cluster, journal);
    try {
      await expect(resumer.pipeline.resume(config.turn)).rejects.toMatchObject({ code: 'turn_leased' });
      await new Promise((done) => setTimeout(done, AGENT_LEASE_MS + 200));
      const results = await resumer.pipeline.resume(config.turn);

      expect(results.map((r) => r.id)).toEqual(agentTurn.map((call) => call.id));
      expect(results.map((r) => r.status)).toEqual(agentTurn.map(() => 'ok'));
      for (const id of ['quick-idem', 'quick']) {
        const finished = [...journaled.values()].find((call) => call.id === id)!.finished!;
        expect(results.find((r) => r.id === id)!.content, `${id} is replayed`).toEqual(finished.content);
      }
      for (const call of agentTurn) {
        expect(starts(call.id), `${call.id}'s body ran once`).toHaveLength(1);
        expect(results.find((r) => r.id === call.id)!.content, call.id).toBe(JSON.stringify({ pid: starts(call.id)[0]!.pid }));
      }

      const again = await resumer.pipeline.resume(config.turn);
      expect(outline(again)).toEqual(outline(results));
      for (const call of agentTurn) expect(starts(call.id)).toHaveLength(1);
    } finally {
      await resumer.remote.close();
    }
  }, 60_000);
});
