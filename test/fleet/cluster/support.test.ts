import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skippedBecause } from '../../support/skip.js';
import { clusterPrefix, redisClusterMissing, requireRedisCluster, startRedisCluster, type RedisClusterHandle } from '../../support/redisCluster.js';

requireRedisCluster();
const missing = redisClusterMissing();

describe.skipIf(missing !== undefined)(skippedBecause('the cluster tests have a real 3-master Redis Cluster', missing), () => {
  let handle: RedisClusterHandle;
  beforeAll(async () => {
    handle = await startRedisCluster({ private: true });
  });
  afterAll(async () => {
    await handle?.stop();
  });

  it('spreads keys over three masters, and a restarted node takes its slots back (empty)', async () => {
    expect(handle.nodes).toHaveLength(3);
    const cluster = handle.cluster();
    try {
      const prefix = clusterPrefix('support');
      // Keys without a common hash tag land on different masters; one tag keeps a multi-key command legal.
      await cluster.mset(`${prefix}:a`, '1', `${prefix}:b`, '2');
      expect(await cluster.exists(`${prefix}:a`, `${prefix}:b`)).toBe(2);
      expect(cluster.nodes('master')).toHaveLength(3);
      const slot = (await cluster.cluster('KEYSLOT', `${prefix}:a`)) as number;
      const owner = handle.nodes.findIndex((node) => cluster.slots[slot]?.[0] === `${node.host}:${node.port}`);
      expect(owner).toBeGreaterThanOrEqual(0);
      await handle.restartNode(owner, 100);
      expect(await cluster.get(`${prefix}:a`)).toBeNull();
      await cluster.set(`${prefix}:a`, '3');
      expect(await cluster.get(`${prefix}:a`)).toBe('3');
    } finally {
      await cluster.quit();
    }
  });

  it('the shared cluster (or a fresh one) refuses restartNode unless private', async () => {
    const shared = await startRedisCluster();
    try {
      if (process.env['REDIS_CLUSTER_NODES'] !== undefined) await expect(shared.restartNode(0)).rejects.toThrow(/private/);
      const cluster = shared.cluster();
      expect(await cluster.ping()).toBe('PONG');
      await cluster.quit();
    } finally {
      await shared.stop();
    }
  });
});
