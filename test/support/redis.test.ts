import { describe, expect, it } from 'vitest';
import { REDIS_MISSING, redisAvailable, requireRedis, startRedis } from './redis.js';

describe('the fleet tests have a real Redis', () => {
  it.skipIf(!redisAvailable())(`starts (or is given) one that answers (${redisAvailable() ? 'redis-server found' : REDIS_MISSING})`, async () => {
    const { Redis } = await import('ioredis');
    for (const own of [false, true]) {
      const redis = await startRedis({ own });
      const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await client.connect();
      expect(await client.ping()).toBe('PONG');
      client.disconnect();
      await redis.stop();
    }
  });

  it('under CI=true a missing Redis fails rather than skips', () => {
    requireRedis(); // throws under CI when neither REDIS_URL nor redis-server is there
    expect(redisAvailable() || process.env['CI'] !== 'true').toBe(true);
  });
});
