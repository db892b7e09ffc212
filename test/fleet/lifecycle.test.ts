import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolWorker, remoteTools, setFleetLimits } from '../../src/bullmq/index.js';
import { ConfigError } from '../../src/index.js';
import { redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';
import { echo } from './support/contracts.js';
import { SECRET, WITH_REDIS } from './support/fleet.js';

requireRedis();

const connection = { host: '127.0.0.1', port: 1 }; // never connected to: validation is eager

describe('fleet options are validated eagerly', () => {
  const where = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return `${(error as ConfigError).where} ${(error as ConfigError).option}`;
    }
    return 'accepted';
  };

  it('remoteTools and createToolWorker name the option at fault', () => {
    expect(where(() => remoteTools([echo], { connection, queue: 'q', secret: 'short' }))).toBe('remoteTools secret');
    expect(where(() => remoteTools([echo], { connection, queue: 'a:b', secret: SECRET }))).toBe('remoteTools queue');
    expect(where(() => remoteTools([echo], { connection, queue: () => '', secret: SECRET }))).toBe('remoteTools queue(contracts[0])');
    expect(where(() => remoteTools([echo, echo], { connection, queue: 'q', secret: SECRET }))).toBe('remoteTools contracts[1].name');
    expect(where(() => remoteTools([{ name: 'x' } as never], { connection, queue: 'q', secret: SECRET }))).toBe('remoteTools contracts[0]');
    expect(where(() => remoteTools([echo], { connection: 'redis://x' as never, queue: 'q', secret: SECRET }))).toBe('remoteTools connection');
    expect(where(() => remoteTools([echo], { connection, queue: 'q', secret: SECRET, reconcileMs: 0 }))).toBe('remoteTools reconcileMs');
    expect(where(() => remoteTools([echo], { connection, queue: 'q', secret: SECRET, keepJobsMs: 10 }))).toBe('remoteTools keepJobsMs');
    expect(where(() => remoteTools([echo], { connection, queue: 'q', secret: SECRET, jobExpiryMs: 999 }))).toBe('remoteTools jobExpiryMs');
    expect(where(() => remoteTools([echo], { connection, queue: 'q', secret: SECRET, jobExpiryMs: Infinity }))).toBe('remoteTools jobExpiryMs');
    expect(where(() => createToolWorker({ connection, queue: 'q', secret: SECRET, tools: [echo as never] }))).toBe('createToolWorker tools[0]');
    expect(where(() => createToolWorker({ connection, queue: 'q', secret: SECRET, tools: [], concurrency: 0 }))).toBe('createToolWorker concurrency');
    expect(where(() => createToolWorker({ connection, queue: 'q', secret: SECRET, tools: [], lockMs: 10 }))).toBe('createToolWorker lockMs');
    expect(where(() => createToolWorker({ connection, queue: 'q', secret: new Uint8Array(8), tools: [] }))).toBe('createToolWorker secret');
  });

  it('setFleetLimits rejects before it connects', async () => {
    await expect(setFleetLimits({ connection, queue: 'q', concurrency: 0 })).rejects.toMatchObject({ where: 'setFleetLimits', option: 'concurrency' });
    await expect(setFleetLimits({ connection, queue: 'q', rateLimit: { max: 1, perMs: -1 } })).rejects.toMatchObject({ where: 'setFleetLimits', option: 'rateLimit.perMs' });
  });
});

describe.skipIf(!redisAvailable())(`closing (${WITH_REDIS})`, () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('close() on the agent and the worker leaves nothing behind: the process exits by itself', async () => {
    const script = resolve(import.meta.dirname, 'support/roundTripAndExit.ts');
    // Under the test's 120 s: a ceiling only a process that does not exit reaches (15 s was not enough at load 25).
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, redis.url], { timeout: 110_000 });
    expect(stdout).toBe('ok:"bye" ok:[0,1,2]');
  });

  it('setFleetLimits sets and removes a queue\'s global concurrency and rate limit', async () => {
    const prefix = `tslimits-${Date.now()}`;
    const options = { connection: { url: redis.url }, queue: 'limits', prefix };
    const inspect = new Redis(redis.url);
    try {
      await setFleetLimits({ ...options, concurrency: 7, rateLimit: { max: 10, perMs: 1000 } });
      const meta = await inspect.hgetall(`${prefix}:limits:meta`);
      expect(meta).toMatchObject({ concurrency: '7', max: '10', duration: '1000' });
      await setFleetLimits({ ...options, concurrency: null, rateLimit: null });
      const after = await inspect.hgetall(`${prefix}:limits:meta`);
      expect(after['concurrency']).toBeUndefined();
      expect(after['max']).toBeUndefined();
    } finally {
      await inspect.del(`${prefix}:limits:meta`);
      await inspect.quit();
    }
  });
});
