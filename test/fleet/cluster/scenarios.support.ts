import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Cluster, ClusterOptions } from 'ioredis';
import { remoteTools, type RemoteTools } from '../../../src/bullmq/index.js';
import { createPipeline, type JournalStore, type Pipeline } from '../../../src/index.js';
import { clusterPrefix, REDIS_CLUSTER_MISSING, redisClusterAvailable, type RedisClusterHandle } from '../../support/redisCluster.js';
import { step, stepIdempotent } from '../support/contracts.js';
import { AGENT_LEASE_MS, APPROVAL_SECRET } from '../support/fleetAgent.js';
import { launchProcess, readEvents, SECRET, stopProcess, type ProcessExit } from '../support/fleet.js';
import type { WorkerEvent } from '../support/fleetTools.js';

/**
 * The fleet scenarios of issue 29 on a real Redis Cluster: the pieces the scenario files share (worker
 * processes on a cluster, the agent of the durable turn, cleaning a prefix's keys), as test/fleet/support
 * has them for a single Redis — the same tools, contracts and logs, only the connection differs.
 */

/** For a scenario file's describe name: what it runs on, or why it is skipped. */
export const WITH_CLUSTER = redisClusterAvailable() ? 'real Redis Cluster, real worker processes' : `skipped: ${REDIS_CLUSTER_MISSING}`;

/**
 * The options every process of the scenarios gives its ioredis `Cluster`: what a user must give, which
 * is nothing — the fleet opens its own copies of the `Cluster` (its startup nodes and options) with
 * `maxRetriesPerRequest: null` in `redisOptions`, as BullMQ's blocking connections need, and
 * `maxRedirections: Infinity`, so its commands wait out a master restarting.
 */
export const CLUSTER_OPTIONS: ClusterOptions = {};

/** What a worker process of the scenarios is told (`scenarios.worker.ts`, as JSON in CLUSTER_WORKER). */
export interface ClusterWorkerConfig {
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  readonly prefix: string;
  readonly secret: string;
  readonly logDir: string;
  readonly lockMs?: number;
  readonly queues: readonly { readonly queue: string; readonly concurrency: number }[];
}

const WORKER = resolve(import.meta.dirname, 'scenarios.worker.ts');

/** Worker processes on a cluster for one scenario: their hash-tagged prefix, logs, and how to stop them. */
export interface ClusterFleet {
  /** `{fleet-…}`: a hash tag of its own, so the fleet's keys share a slot and tests sharing a cluster keep apart. */
  readonly prefix: string;
  readonly logDir: string;
  readonly workers: ChildProcess[];
  /** Starts `n` more worker processes on `queues`, once ready. */
  start(n: number, queues: ClusterWorkerConfig['queues'], options?: { readonly lockMs?: number }): Promise<ChildProcess[]>;
  /** Every event the workers logged so far, in time order. */
  events(): WorkerEvent[];
  /** Empties the workers' logs. */
  clearEvents(): void;
  /** Stops the workers (SIGTERM, then SIGKILL), deletes the prefix's keys and the logs; how each stopped. */
  stop(): Promise<readonly ProcessExit[]>;
}

/** A new fleet on `handle`'s cluster (workers are started with `start`). */
export function clusterFleet(handle: RedisClusterHandle): ClusterFleet {
  const prefix = clusterPrefix('fleet');
  const logDir = mkdtempSync(join(tmpdir(), 'toolstream-cluster-fleet-'));
  const workers: ChildProcess[] = [];
  return {
    prefix,
    logDir,
    workers,
    async start(n, queues, options = {}) {
      const config: ClusterWorkerConfig = { nodes: handle.nodes, prefix, secret: SECRET, logDir, queues, ...options };
      const launched = Array.from({ length: n }, () => launchProcess(WORKER, { CLUSTER_WORKER: JSON.stringify(config) }));
      workers.push(...launched.map(({ child }) => child));
      await Promise.all(launched.map(({ ready }) => ready));
      return launched.map(({ child }) => child);
    },
    events: () => readEvents(logDir),
    clearEvents: () => {
      for (const file of readdirSync(logDir)) if (file.endsWith('.jsonl')) truncateSync(join(logDir, file));
    },
    async stop() {
      const exits = await Promise.all(workers.map(stopProcess));
      const cluster = handle.cluster();
      try {
        await deletePrefixed(cluster, prefix);
      } finally {
        cluster.disconnect();
      }
      rmSync(logDir, { recursive: true, force: true });
      return exits;
    },
  };
}

/** Deletes every key under `prefix` (hash-tagged: they are all on the master that owns its slot). */
export async function deletePrefixed(cluster: Cluster, prefix: string): Promise<void> {
  for (const node of cluster.nodes('master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await node.del(...keys);
    } while (cursor !== '0');
  }
}

/** Which of `handle.nodes` owns `key`'s slot (through `cluster`, connected). */
export async function ownerOf(handle: RedisClusterHandle, cluster: Cluster, key: string): Promise<number> {
  const slot = (await cluster.call('CLUSTER', 'KEYSLOT', key)) as number;
  const ranges = (await cluster.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
  const range = ranges.find(([from, to]) => from <= slot && slot <= to);
  const index = handle.nodes.findIndex((node) => node.port === range?.[2][1]);
  if (index < 0) throw new Error(`no node of the cluster owns slot ${slot} of ${key}`);
  return index;
}

/** Where the agent of the durable scenario finds the fleet and its turn (the test and its child share it). */
export interface ClusterAgentConfig {
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  readonly prefix: string;
  readonly queue: string;
  readonly journalPrefix: string;
  readonly turn: string;
}

/**
 * One agent "process" on a cluster: remote tools (the idempotent `step_idempotent` and the plain `step`)
 * on `cluster`, and a durable pipeline on `journal` with the fleet fault tests' short lease (see
 * test/fleet/support/fleetAgent.ts, whose turn it runs).
 */
export function clusterAgent(config: ClusterAgentConfig, cluster: Cluster, journal: JournalStore): { readonly remote: RemoteTools; readonly pipeline: Pipeline } {
  const remote = remoteTools([step, stepIdempotent], { connection: cluster, queue: config.queue, prefix: config.prefix, secret: SECRET, reconcileMs: 200 });
  const pipeline = createPipeline({ tools: remote.tools, journal, approvalSecret: APPROVAL_SECRET, leaseMs: AGENT_LEASE_MS, concurrency: 2 });
  return { remote, pipeline };
}
