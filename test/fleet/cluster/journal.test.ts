/**
 * `redisJournal` on a real Redis Cluster (issue 29), given an ioredis `Cluster`: the contract every
 * store passes — with a prefix that has no hash tag (each turn's keys share the turn's slot, so turns
 * spread over the masters, and no script or multi-key command crosses slots) and with a hash-tagged one
 * (every key in one slot) — and the given `Cluster` left open by `close()`.
 */
import type { Cluster } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { redisJournal } from '../../../src/bullmq/index.js';
import { journalStoreContract } from '../../durable/journalStoreContract.js';
import { clusterPrefix, redisClusterMissing, requireRedisCluster, startRedisCluster, type RedisClusterHandle } from '../../support/redisCluster.js';
import { skippedBecause } from '../../support/skip.js';

requireRedisCluster();
const missing = redisClusterMissing();

describe.skipIf(missing !== undefined)(skippedBecause('redisJournal on a Redis Cluster', missing), () => {
  let handle: RedisClusterHandle | undefined;
  let cluster: Cluster | undefined;
  const prefixes: string[] = [];
  /** The cluster, started on first use (the contract opens its store in its own beforeAll). */
  const connection = async (): Promise<Cluster> => {
    handle ??= await startRedisCluster();
    return (cluster ??= handle.cluster());
  };
  afterAll(async () => {
    if (cluster !== undefined) {
      // Every key the tests wrote, on every master (SCAN is per node).
      for (const node of cluster.nodes('master')) {
        for (const prefix of prefixes) {
          const keys: string[] = [];
          for (let cursor = '0'; ; ) {
            const [next, found] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
            keys.push(...found);
            if ((cursor = next) === '0') break;
          }
          for (const key of keys) await cluster.del(key);
        }
      }
      await cluster.quit();
    }
    await handle?.stop();
  });
  const opened = async (prefix: string) => {
    prefixes.push(prefix.replace(/[{}]/g, '?')); // SCAN's MATCH reads braces literally; '?' matches them too
    const given = await connection();
    return { store: redisJournal({ connection: given, prefix }), reopen: () => redisJournal({ connection: given, prefix }) };
  };

  journalStoreContract('redisJournal on a Cluster, prefix without a hash tag (the turn is the tag)', () => opened(`test-${clusterPrefix().slice(1, -1)}`), { durable: true });
  journalStoreContract('redisJournal on a Cluster, hash-tagged prefix', () => opened(`${clusterPrefix('j')}:journal`), { durable: true });

  it('close() leaves the given Cluster open, and turns spread over the masters', async () => {
    const given = await connection();
    const prefix = `spread-${clusterPrefix().slice(1, -1)}`;
    prefixes.push(prefix);
    const journal = redisJournal({ connection: given, prefix });
    const turns = Array.from({ length: 12 }, (_, i) => `turn-${i}`);
    for (const turn of turns) expect(await journal.acquire(turn, 'me', 60_000)).toBe(1);
    await journal.close();
    expect(given.status).toBe('ready');
    const slots = await Promise.all(turns.map((turn) => given.cluster('KEYSLOT', `${prefix}:{${turn}}:lease`) as Promise<number>));
    const masters = new Set(slots.map((slot) => given.slots[slot]?.[0]));
    expect(masters.size).toBeGreaterThan(1);
  });
});
