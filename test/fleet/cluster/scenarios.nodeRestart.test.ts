/**
 * A Redis Cluster node restarted (SIGKILLed and started again on its port, empty: nothing persists)
 * while remote bodies run (issue 29), on a private cluster of this file's own. A hash-tagged prefix
 * puts every key of the fleet on the one master that owns its slot, so two cases, one after the other
 * on the same agent and two worker processes:
 * - **another node**: the fleet's data is untouched; every call is ok, none ran twice;
 * - **the fleet's node**: as a single Redis restarted without persistence (test/fleet/faults.redisRestart):
 *   every call is answered — ok, or a `tool_error` with `cause.code === 'job_lost'` for a job lost with
 *   the data — none ran twice, and the turn does not hang.
 * After each, the agent and both workers go on: a next turn is served by both; at the end every fleet
 * object closes within seconds.
 */
import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteTools, type RemoteTools } from '../../../src/bullmq/index.js';
import { createPipeline, type Pipeline, type ToolResult } from '../../../src/index.js';
import { redisClusterAvailable, requireRedisCluster, startRedisCluster, type RedisClusterHandle } from '../../support/redisCluster.js';
import { closesWithin, expectClosedThemselves } from '../support/closing.js';
import { sleep, sleepIdempotent } from '../support/contracts.js';
import { SECRET, until } from '../support/fleet.js';
import { CLUSTER_OPTIONS, clusterFleet, type ClusterFleet, ownerOf, WITH_CLUSTER } from './scenarios.support.js';

requireRedisCluster();

const CALLS = 6;
/** Bodies run this long: the node goes down while they do. */
const BODY_MS = 600;
const DOWN_MS = 300;
/** The turn must be answered by then, or the test fails (rather than hangs). */
const ANSWER_WITHIN_MS = 15_000;

const outline = (results: readonly ToolResult[]) => results.map((r) => `${r.id}:${r.status}${r.error === undefined ? '' : `/${r.error.code}/${(r.error as { cause?: { code?: string } }).cause?.code ?? ''}`}`);

describe.skipIf(!redisClusterAvailable())(`a Redis Cluster node restarted mid-turn (${WITH_CLUSTER})`, () => {
  const queue = `q-${randomUUID()}`;
  let handle: RedisClusterHandle;
  let fleet: ClusterFleet | undefined;
  let cluster: Cluster;
  let remote: RemoteTools | undefined;
  let pipeline: Pipeline;
  /** Which of the cluster's nodes owns the fleet's slot. */
  let owner: number;

  beforeAll(async () => {
    handle = await startRedisCluster({ private: true });
    fleet = clusterFleet(handle);
    await fleet.start(2, [{ queue, concurrency: 2 }]);
    cluster = handle.cluster(CLUSTER_OPTIONS);
    remote = remoteTools([sleep, sleepIdempotent], { connection: cluster, queue, prefix: fleet.prefix, secret: SECRET, reconcileMs: 200 });
    pipeline = createPipeline({ tools: remote.tools, concurrency: CALLS });
    owner = await ownerOf(handle, cluster, `${fleet.prefix}:any`);
  });
  afterAll(async () => {
    await remote?.close();
    await fleet?.stop();
    cluster?.disconnect();
    await handle?.stop();
  });

  const starts = (prefix: string) => fleet!.events().filter((event) => event.e === 'start' && event.callId.startsWith(prefix));

  for (const which of ['another node', 'the fleet\'s node'] as const) {
    it(`${which} (down ${DOWN_MS} ms, empty when back): every call answered${which === 'another node' ? ' ok' : ''}, none ran twice, no hang; a next turn works on both workers`, async () => {
      const victim = which === 'another node' ? (owner + 1) % handle.nodes.length : owner;
      const tag = which === 'another node' ? 'other' : 'own';
      // 4 bodies run (2 workers x 2), 2 jobs wait; then the node dies under them and comes back.
      const calls = Array.from({ length: CALLS }, (_, i) => ({ id: `${tag}-before-${i}`, name: i % 2 === 0 ? 'sleep' : 'sleep_idempotent', args: { ms: BODY_MS } }));
      const run = pipeline.run(calls);
      await until(() => starts(`${tag}-before-`).length === 4, 5000, 'four bodies to start');
      await handle.restartNode(victim, DOWN_MS);
      const backAt = Date.now();
      let deadline: NodeJS.Timeout | undefined;
      const results = await Promise.race([
        run,
        new Promise<never>((_, reject) => (deadline = setTimeout(() => reject(new Error(`the turn was not answered within ${ANSWER_WITHIN_MS} ms of the restart`)), ANSWER_WITHIN_MS))),
      ]).finally(() => clearTimeout(deadline));
      console.log(`Redis Cluster: ${which} restarted mid-turn (down ${DOWN_MS} ms): answered ${Date.now() - backAt} ms after it was back: ${outline(results).join(' ')}`);

      expect(results.map((r) => r.id)).toEqual(calls.map((c) => c.id));
      for (const result of results) {
        if (which === 'another node') expect(result.status, outline(results).join(' ')).toBe('ok');
        else if (result.status !== 'ok') expect(result, outline(results).join(' ')).toMatchObject({ status: 'error', error: { code: 'tool_error', cause: { code: 'job_lost' } } });
      }
      // Let any body that could still start (a re-run, once a stall check moved its job) do so, then count: each at most once.
      await new Promise((resolve) => setTimeout(resolve, BODY_MS + 500));
      for (const call of calls) expect(starts(call.id).length, `${call.id} ran ${starts(call.id).length} times`).toBeLessThanOrEqual(1);
      expect(starts(`${tag}-before-`).length).toBeGreaterThanOrEqual(4);

      // Everyone reconnected: a next turn of four overlapping bodies needs both workers (2 slots each).
      const next = await pipeline.run(Array.from({ length: 4 }, (_, i) => ({ id: `${tag}-after-${i}`, name: 'sleep', args: { ms: 200 } })));
      expect(next.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
      expect(new Set(next.map((r) => (r.value as { pid: number }).pid)).size).toBe(2);
    }, 60_000);
  }

  it('then the agent\'s remote tools and both workers close within seconds, by themselves', async () => {
    const agentCloseMs = await closesWithin(() => remote!.close(), 'remoteTools().close()');
    remote = undefined;
    const exits = await fleet!.stop();
    fleet = undefined;
    console.log(`closed after the node restarts: remoteTools ${agentCloseMs.toFixed(0)} ms; workers ${exits.map((exit) => `${exit.ms.toFixed(0)} ms`).join(', ')}`);
    expectClosedThemselves(exits);
  });
});
