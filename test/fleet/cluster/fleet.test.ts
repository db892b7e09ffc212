/**
 * The fleet on a real Redis Cluster (issue 29), agent and worker in this process, each given the same
 * ioredis `Cluster`: a round trip (with every connection going to the cluster — none to
 * localhost:6379), cancel, a fleet-wide limit, the heartbeat count and `no_worker`. Each test has a
 * hash-tagged prefix of its own, so tests sharing the CI cluster never see each other's keys.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolWorker, RemoteToolError, remoteTools, setFleetLimits, type RemoteTools, type ToolWorker } from '../../../src/bullmq/index.js';
import { createPipeline, implementTool, type ToolResult } from '../../../src/index.js';
import { clusterPrefix, redisClusterMissing, requireRedisCluster, startRedisCluster, type RedisClusterHandle } from '../../support/redisCluster.js';
import { skippedBecause } from '../../support/skip.js';
import { echo, sleep } from '../support/contracts.js';
import { SECRET, until } from '../support/fleet.js';

requireRedisCluster();
const missing = redisClusterMissing();

/** The loopback ports this process's TCP sockets are connected to (Linux: its fds, matched in /proc/net/tcp). */
function connectedPorts(): Set<number> {
  const inodes = new Set(readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1]].filter((inode) => inode !== undefined);
    } catch {
      return []; // closed meanwhile
    }
  }));
  const ports = new Set<number>();
  for (const line of readFileSync('/proc/self/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    const [remote, state, inode] = [fields[2], fields[3], fields[9]];
    if (remote === undefined || inode === undefined || !inodes.has(inode) || state === '0A') continue; // 0A: listening
    ports.add(parseInt(remote.split(':')[1]!, 16));
  }
  return ports;
}

const causeOf = (result: ToolResult): RemoteToolError => (result.error as { cause?: unknown } | undefined)?.cause as RemoteToolError;

describe.skipIf(missing !== undefined)(skippedBecause('the fleet on a Redis Cluster (agent and worker given a Cluster)', missing), () => {
  let handle: RedisClusterHandle;
  let cluster: Cluster;
  const closing: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    handle = await startRedisCluster();
    cluster = handle.cluster();
  });
  afterAll(async () => {
    await Promise.all(closing.map((made) => made.close()));
    await cluster?.quit();
    await handle?.stop();
  });
  const agent = (...args: Parameters<typeof remoteTools>): RemoteTools => {
    const made = remoteTools(...args);
    closing.push(made);
    return made;
  };
  const worker = (options: Parameters<typeof createToolWorker>[0]): ToolWorker => {
    const made = createToolWorker(options);
    closing.push(made);
    return made;
  };

  it('a remote call round trip; every connection goes to the cluster\'s nodes, none to localhost:6379; the given Cluster stays open', async () => {
    const prefix = clusterPrefix('roundtrip');
    const w = worker({ connection: cluster, queue: 'q', prefix, secret: SECRET, tools: [implementTool(echo, ({ text }) => `echo:${text}`)] });
    await w.ready();
    const fleet = agent([echo], { connection: cluster, queue: 'q', prefix, secret: SECRET });
    const [result] = await createPipeline({ tools: fleet.tools }).run([{ id: 'c1', name: 'echo', args: { text: 'hi' } }]);
    expect(result).toMatchObject({ status: 'ok', value: 'echo:hi' });
    expect(await fleet.workers()).toEqual({ q: 1 });
    if (process.platform === 'linux') {
      const ports = connectedPorts();
      expect(ports.has(6379)).toBe(false);
      const nodePorts = new Set(handle.nodes.map((node) => node.port));
      expect([...ports].filter((port) => !nodePorts.has(port))).toEqual([]);
      expect(ports.size).toBeGreaterThan(0);
    }
    await fleet.close();
    await w.close();
    expect(cluster.status).toBe('ready'); // the caller's: copied, never closed by us
    expect(await cluster.ping()).toBe('PONG');
  });

  it('cancel: the run\'s signal aborts the body on the worker', async () => {
    const prefix = clusterPrefix('cancel');
    let aborted!: () => void;
    const abortSeen = new Promise<void>((resolve) => (aborted = resolve));
    let started = false;
    const body = implementTool(sleep, async ({ ms }, { signal }) => {
      started = true;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => (clearTimeout(timer), aborted(), resolve()), { once: true });
      });
      return 'slept';
    });
    await worker({ connection: cluster, queue: 'q', prefix, secret: SECRET, tools: [body] }).ready();
    const fleet = agent([sleep], { connection: cluster, queue: 'q', prefix, secret: SECRET });
    const controller = new AbortController();
    const run = createPipeline({ tools: fleet.tools }).run([{ id: 'c1', name: 'sleep', args: { ms: 30_000 } }], { signal: controller.signal });
    await until(() => started, 20_000, 'the body to start');
    controller.abort();
    const [result] = await run;
    expect(result).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', started: true } });
    await abortSeen; // the test's timeout catches a cancel that never reaches the worker
  });

  it('setFleetLimits: concurrency 1 over two workers holds on the cluster', async () => {
    const prefix = clusterPrefix('limits');
    await setFleetLimits({ connection: cluster, queue: 'q', prefix, concurrency: 1 });
    let running = 0;
    let most = 0;
    const body = implementTool(sleep, async ({ ms }) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, ms));
      running--;
      return 'slept';
    });
    await Promise.all([1, 2].map(() => worker({ connection: cluster, queue: 'q', prefix, secret: SECRET, tools: [body], concurrency: 2 }).ready()));
    const fleet = agent([sleep], { connection: cluster, queue: 'q', prefix, secret: SECRET });
    const calls = [0, 1, 2, 3].map((i) => ({ id: `c${i}`, name: 'sleep', args: { ms: 100 } }));
    const results = await createPipeline({ tools: fleet.tools }).run(calls);
    expect(results.map((result) => result.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(most).toBe(1);
    await setFleetLimits({ connection: cluster, queue: 'q', prefix, concurrency: null });
  });

  it('heartbeats: the agent counts the queue\'s workers, and a queue with none fails its call no_worker', async () => {
    const prefix = clusterPrefix('presence');
    const w = worker({ connection: cluster, queue: 'served', prefix, secret: SECRET, tools: [implementTool(echo, ({ text }) => text)] });
    await w.ready();
    const fleet = agent([echo], { connection: cluster, queue: (c) => (c.name === 'echo' ? 'served' : 'none'), prefix, secret: SECRET });
    expect(await fleet.workers()).toEqual({ served: 1 });
    await w.close();
    expect(await fleet.workers()).toEqual({ served: 0 });
    const lonely = agent([echo], { connection: cluster, queue: 'lonely', prefix, secret: SECRET, noWorkerMs: 300, onWarning: () => undefined });
    const [result] = await createPipeline({ tools: lonely.tools }).run([{ id: 'c1', name: 'echo', args: { text: 'x' } }]);
    expect(result).toMatchObject({ status: 'error' });
    expect(causeOf(result!)).toMatchObject({ code: 'no_worker', queue: 'lonely' });
  });
});
