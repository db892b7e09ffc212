/**
 * A worker its owner closes before it connected says nothing afterwards. A worker that gives up
 * connecting on its own says why as a process warning (no one asked `ready()`, so no one else hears
 * it); one closed by its owner first has nothing to tell. It did warn, after `close()` had resolved,
 * once its connect timeout passed: a test that made and closed a worker on an unreachable cluster
 * failed the suite's no-stray-warnings check whenever its file outlived those 100 ms (CI, under load).
 */
import { Cluster } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { createToolWorker } from '../../src/bullmq/index.js';
import { capturingWarnings } from '../support/warnings.js';
import { SECRET } from './support/fleet.js';

const CONNECT_TIMEOUT_MS = 100;
const unreachable = {
  'a single Redis': () => ({ connection: { host: '127.0.0.1', port: 1 }, done: () => undefined }),
  'a Redis Cluster': () => {
    const connection = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    return { connection, done: () => connection.disconnect() };
  },
};

describe('a worker closed by its owner before it connected', () => {
  for (const [what, make] of Object.entries(unreachable)) {
    it(`on ${what}: no warning, during close() or after its connect timeout`, async () => {
      const { connection, done } = make();
      const { warnings } = await capturingWarnings(async () => {
        await createToolWorker({ connection, secret: SECRET, connectTimeoutMs: CONNECT_TIMEOUT_MS, queue: '{q}', tools: [] }).close();
        await sleep(CONNECT_TIMEOUT_MS * 4);
      });
      done();
      expect(warnings.map((warning) => warning.message)).toEqual([]);
    });
  }

  it('one left alone still says why it closed, naming the address', async () => {
    const { warnings } = await capturingWarnings(async () => {
      const worker = createToolWorker({ connection: { host: '127.0.0.1', port: 1 }, secret: SECRET, connectTimeoutMs: CONNECT_TIMEOUT_MS, queue: 'q', tools: [] });
      // capturingWarnings has process.emitWarning mocked while this runs
      await expect.poll(() => vi.mocked(process.emitWarning).mock.calls.length, { timeout: 10_000 }).toBeGreaterThan(0);
      await worker.close();
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ name: 'ToolstreamFleetWarning', code: 'TOOLSTREAM_REDIS_UNREACHABLE' });
    expect(warnings[0]!.message).toContain('127.0.0.1:1');
  });
});
