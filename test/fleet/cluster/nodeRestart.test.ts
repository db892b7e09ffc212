/**
 * A master of the fleet's slot restarting (issue 29): a call made while it is down waits for it, as on
 * a single Redis, instead of failing after ioredis's 16 redirections (about a second). On a private
 * cluster, restarted empty (no persistence): the worker's heartbeat and BullMQ's state come back by
 * themselves. Multi-process restarts (calls in flight, none run twice) are in scenarios.*.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolWorker, remoteTools } from '../../../src/bullmq/index.js';
import { createPipeline, implementTool } from '../../../src/index.js';
import { clusterPrefix, redisClusterMissing, requireRedisCluster, startRedisCluster, type RedisClusterHandle } from '../../support/redisCluster.js';
import { skippedBecause } from '../../support/skip.js';
import { capturingWarnings } from '../../support/warnings.js';
import { echo } from '../support/contracts.js';
import { SECRET } from '../support/fleet.js';

requireRedisCluster();
const missing = redisClusterMissing();

describe.skipIf(missing !== undefined)(skippedBecause('the fleet while a master of its slot restarts', missing), () => {
  let handle: RedisClusterHandle;
  beforeAll(async () => {
    handle = await startRedisCluster({ private: true });
  });
  afterAll(async () => {
    await handle?.stop();
  });

  it('a call made while the master is down is answered once it is back', async () => {
    const cluster = handle.cluster();
    cluster.on('error', () => undefined);
    const prefix = clusterPrefix('restart');
    const runs: string[] = [];
    const worker = createToolWorker({ connection: cluster, queue: 'q', prefix, secret: SECRET, tools: [implementTool(echo, ({ text }) => (runs.push(text), `echo:${text}`))] });
    const ready = worker.ready();
    const fleet = remoteTools([echo], { connection: cluster, queue: 'q', prefix, secret: SECRET, noWorkerMs: Infinity, onWarning: () => undefined }); // may look before the worker is up
    try {
      await ready;
      const pipeline = createPipeline({ tools: fleet.tools });
      expect((await pipeline.run([{ id: 'before', name: 'echo', args: { text: 'before' } }]))[0]).toMatchObject({ status: 'ok' });
      const slot = (await cluster.cluster('KEYSLOT', `${prefix}:q:wait`)) as number;
      const owner = handle.nodes.findIndex((node) => cluster.slots[slot]?.[0] === `${node.host}:${node.port}`);
      // ioredis 5.8 may warn while its pub/sub subscriber's node is down (redis/ioredis#2030): not ours.
      const { value: result, warnings } = await capturingWarnings(async () => {
        const restarted = handle.restartNode(owner, 2000);
        await new Promise((resolve) => setTimeout(resolve, 300)); // down by now: SIGKILL, then 2 s away
        const [during] = await pipeline.run([{ id: 'during', name: 'echo', args: { text: 'during' } }]);
        await restarted;
        return during;
      });
      expect(warnings.filter((warning) => !(warning.name === 'MaxListenersExceededWarning' && warning.message.includes('[Socket]')))).toEqual([]);
      expect(result).toMatchObject({ status: 'ok', value: 'echo:during' });
      expect(runs).toEqual(['before', 'during']);
    } finally {
      await Promise.all([fleet.close(), worker.close()]);
      cluster.disconnect();
    }
  });
});
