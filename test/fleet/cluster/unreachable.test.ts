/**
 * A Redis Cluster that cannot be reached, or goes away (issue 29): nothing is swallowed silently. A
 * `Cluster` whose startup nodes answer nothing fails a worker's `ready()`, the agent's calls and
 * `setFleetLimits` with `redis_unreachable` naming every startup node, after `connectTimeoutMs`; no
 * connection is left retrying; `close()` returns. A cluster that goes away under a running agent and
 * worker: their `close()` returns all the same, and a call waiting is answered. Bounds are generous
 * ceilings (a loaded machine), far below "forever".
 */
import { createServer, type Socket } from 'node:net';
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createToolWorker, RemoteToolError, remoteTools, setFleetLimits } from '../../../src/bullmq/index.js';
import { createPipeline, implementTool, type ToolResult } from '../../../src/index.js';
import { clusterPrefix, redisClusterMissing, requireRedisCluster, startRedisCluster } from '../../support/redisCluster.js';
import { skippedBecause } from '../../support/skip.js';
import { stretched } from '../../support/timing.js';
import { capturingWarnings } from '../../support/warnings.js';
import { closedPort } from '../support/closedPort.js';
import { echo } from '../support/contracts.js';
import { SECRET } from '../support/fleet.js';

requireRedisCluster();
const missing = redisClusterMissing();

/** The ceiling for "within seconds": connectTimeoutMs is 1 s here; a loaded machine takes more. */
const CEILING_MS = 30_000;
const causeOf = (result: ToolResult): unknown => (result.error as { cause?: unknown } | undefined)?.cause;

describe('a Redis Cluster that cannot be reached: redis_unreachable naming its startup nodes, within seconds; nothing left retrying', () => {
  it('a worker\'s ready(), a call and setFleetLimits fail naming the nodes; close() returns; no connection retries afterwards', async () => {
    const ports = [await closedPort(), await closedPort(), await closedPort()];
    const cluster = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })), { lazyConnect: true });
    const nodes = ports.map((port) => `127.0.0.1:${port}`).join(', ');
    const options = { connection: cluster, prefix: '{unreachable}', secret: SECRET, connectTimeoutMs: 1000 };
    const startedAt = performance.now();
    const worker = createToolWorker({ ...options, queue: 'q', tools: [implementTool(echo, ({ text }) => text)] });
    const ready = await worker.ready().then(() => undefined, (error: unknown) => error);
    const readyMs = performance.now() - startedAt;
    expect(ready).toBeInstanceOf(RemoteToolError);
    expect(ready).toMatchObject({ code: 'redis_unreachable', address: nodes });
    expect((ready as Error).message).toContain(`The Redis Cluster at ${nodes} (its startup nodes) is unreachable`);
    expect(readyMs).toBeLessThan(stretched(CEILING_MS));

    const fleet = remoteTools([echo], { ...options, queue: 'q', onWarning: () => undefined });
    const [result] = await createPipeline({ tools: fleet.tools }).run([{ id: 'c1', name: 'echo', args: { text: 'x' } }]);
    expect(causeOf(result!)).toMatchObject({ code: 'redis_unreachable', address: nodes });
    await expect(setFleetLimits({ ...options, queue: 'q', concurrency: 1 })).rejects.toMatchObject({ code: 'redis_unreachable', address: nodes });
    await fleet.close();
    await worker.close();
    expect(cluster.status).toBe('wait'); // the caller's Cluster: never used, never connected

    // Something listens on the nodes' ports now: a connection left retrying (ioredis retries a cluster
    // every 2 s at most) would reach it.
    const reached: Socket[] = [];
    const servers = await Promise.all(ports.map((port) => new Promise<ReturnType<typeof createServer>>((resolve) => {
      const server = createServer((socket) => (reached.push(socket), socket.destroy())).listen(port, '127.0.0.1', () => resolve(server));
    })));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    expect(reached).toHaveLength(0);
  });
});

describe.skipIf(missing !== undefined)(skippedBecause('a Redis Cluster that goes away under a running agent and worker', missing), () => {
  it('close() of the agent and the worker returns, and the call waiting is answered', async () => {
    const handle = await startRedisCluster({ private: true });
    const cluster = handle.cluster();
    cluster.on('error', () => undefined); // the test's own client sees the cluster go too
    try {
      const prefix = clusterPrefix('gone');
      const worker = createToolWorker({ connection: cluster, queue: 'served', prefix, secret: SECRET, tools: [implementTool(echo, ({ text }) => text)] });
      await worker.ready();
      const fleet = remoteTools([echo], { connection: cluster, queue: 'waits', prefix, secret: SECRET, noWorkerMs: Infinity, onWarning: () => undefined });
      const pipeline = createPipeline({ tools: fleet.tools });
      const waiting = pipeline.run([{ id: 'c1', name: 'echo', args: { text: 'x' } }]); // no worker on 'waits': it waits
      expect(await fleet.workers()).toEqual({ waits: 0 });
      // ioredis 5.8's Cluster pub/sub reselects its subscriber in a loop while the nodes are down, adding
      // a listener to a socket each time (redis/ioredis#2030): Node's warning for that is not ours.
      const { warnings } = await capturingWarnings(async () => {
        await handle.stop(); // every node gone
        const closedAt = performance.now();
        await Promise.all([fleet.close(), worker.close()]);
        expect(performance.now() - closedAt).toBeLessThan(stretched(CEILING_MS));
      });
      expect(warnings.filter((warning) => !(warning.name === 'MaxListenersExceededWarning' && warning.message.includes('[Socket]')))).toEqual([]);
      const [result] = await waiting;
      expect(result).toMatchObject({ status: 'error' });
    } finally {
      cluster.disconnect();
      await handle.stop();
    }
  });
});
