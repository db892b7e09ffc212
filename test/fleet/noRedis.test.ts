/**
 * No Redis (issue 27): a closed port gives a clear error naming the address within seconds — for the
 * agent's calls, its start-up check, a worker's `ready()` and `setFleetLimits` — and no ioredis retry
 * loop: the process exits by itself. Also the secret's message, which says how to make one. Needs no
 * Redis. Bounds are generous ceilings (a loaded machine), far below "forever".
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createToolWorker, remoteTools } from '../../src/bullmq/index.js';
import { ConfigError } from '../../src/index.js';
import { closedPort } from './support/closedPort.js';
import { echo } from './support/contracts.js';

/** The ceiling for "within seconds" and "exits by itself": the connect timeout is 5 s; process start-up under load takes more. */
const CEILING_MS = 60_000;

describe('no Redis: a clear error naming the address, within seconds, and nothing left retrying', () => {
  it('calls, the start-up check, a worker\'s ready() and setFleetLimits fail redis_unreachable naming the address; the process then exits by itself', async () => {
    const port = await closedPort();
    const script = resolve(import.meta.dirname, 'support/noRedisProcess.ts');
    // execFile's timeout kills a child that hangs (a retry loop left behind): the test then fails.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, `redis://127.0.0.1:${port}`], { timeout: CEILING_MS });
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as { what: string; ms?: number; error?: Record<string, unknown>; value?: unknown });
    const byWhat = new Map(lines.map((line) => [line.what, line]));
    for (const what of ['worker.ready', 'call', 'setFleetLimits']) {
      const line = byWhat.get(what)!;
      expect(line.error, what).toMatchObject({ code: 'redis_unreachable', remote: true, address: `redis://127.0.0.1:${port}` });
      expect(line.error!['message'], what).toContain(`Redis at redis://127.0.0.1:${port} is unreachable`);
      expect(line.error!['message'], what).toContain('redis-server');
      expect(line.ms!, what).toBeGreaterThan(2500); // it gave Redis connectTimeoutMs (5 s, from the first connection) to come up…
      expect(line.ms!, what).toBeLessThan(CEILING_MS); // …and no longer
    }
    console.log(`no Redis: ${['worker.ready', 'call', 'setFleetLimits'].map((what) => `${what} failed after ${byWhat.get(what)!.ms!.toFixed(0)} ms`).join(', ')} (connectTimeoutMs 5000)`);
    expect(byWhat.get('warnings')!.value).toEqual([expect.objectContaining({ code: 'redis_unreachable', address: `redis://127.0.0.1:${port}` })]);
    expect(byWhat.get('processWarnings')!.value).toEqual([expect.stringMatching(new RegExp(`^ToolstreamFleetWarning: createToolWorker \\(queue "unasked"\\): Redis at redis://127.0.0.1:${port} is unreachable`))]);
    expect(byWhat.has('closed')).toBe(true);
  });

  it('a secret too short (the README\'s old `?? \'\'`) is refused with how to make one', () => {
    for (const make of [
      () => createToolWorker({ connection: { port: 1 }, queue: 'q', secret: '', tools: [] }),
      () => remoteTools([echo], { connection: { port: 1 }, queue: 'q', secret: 'short' }),
    ]) {
      expect(make).toThrow(ConfigError);
      expect(make).toThrow('openssl rand -hex 32');
    }
  });
});
