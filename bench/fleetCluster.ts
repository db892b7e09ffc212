/**
 * Fleet bench on a Redis Cluster (issue 29): toolstream's remote tools (`remoteTools` in this process,
 * `createToolWorker` in 2 worker processes, concurrency 10 each) on a **single Redis** and on a
 * **3-master Redis Cluster** (an ioredis `Cluster` as the connection, the same hash-tagged prefix on
 * both, so only the server differs), in the same run, the ratio cluster/single printed. The issue measured
 * the cluster at 5–15% below a single Redis: a fleet's keys share one slot (its hash tag), so one master
 * serves them all, and the cluster client adds its slot routing (and MOVED handling) to every command.
 *
 * Set-up: the Redis of `REDIS_URL` and the cluster of `REDIS_CLUSTER_NODES` (what `.ci/run` starts), else
 * servers of its own on free loopback ports (no persistence); the worker processes are this file, run
 * with `worker <single|cluster> <address>`, and serve the queue each round names. Everything started is
 * stopped, on error too.
 *
 * Workloads, per target (the contract is not idempotent, the default: signed request, run record, signed
 * result):
 * 1. Throughput: JOBS no-op calls through `pipeline.operator()` all at once: calls/s over the round, and
 *    each call's latency from entering the pipeline to its result (p50, p99).
 * 2. One at a time: SERIAL calls, each once the previous result is in: the latency of one call on an
 *    idle fleet (p50).
 *
 * Method: WARMUP rounds, then ROUNDS measured, the targets alternating within each round (the order
 * reversed every other round); medians of the rounds' figures, and the median of each round's own
 * cluster/single ratio (both targets ran back to back in it: steadier on a machine whose load moves). Every result is checked. Figures are
 * printed, never asserted.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import { createToolWorker, remoteTools } from '../src/bullmq/index.js';
import { createPipeline, implementTool, toolContract } from '../src/index.js';
import { startRedis } from '../test/support/redis.js';
import { startRedisCluster } from '../test/support/redisCluster.js';
import { fmt, median, printHeader } from './common.js';
import { noopCalls, percentile, serveQueues, Workers } from './fleetCommon.js';

const WARMUP = 1;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const JOBS = Number(process.env['FLEET_JOBS'] ?? 5_000);
const SERIAL = 300;
const WORKERS = 2;
const CONCURRENCY = 10;
/** One prefix for both targets: a hash tag, as a cluster needs (on a single Redis it is only a name). */
const PREFIX = '{bench}';
const SECRET = 'a bench secret, at least thirty-two bytes long';

const noop = toolContract({ name: 'noop', description: 'nothing', input: z.object({ x: z.number() }), mode: 'parallel' });

type Kind = 'single' | 'cluster';

/** A target: a single Redis (`redis://host:port`) or a cluster (`host:port,host:port,...`, its startup nodes). */
interface Target {
  readonly kind: Kind;
  readonly address: string;
}

/** A connection to `target`, as a user opens one: the caller (this bench) closes it. */
function connect(target: Target): Redis | Cluster {
  if (target.kind === 'single') return new Redis(target.address, { maxRetriesPerRequest: null });
  const nodes = target.address.split(',').map((node) => ({ host: node.slice(0, node.lastIndexOf(':')), port: Number(node.slice(node.lastIndexOf(':') + 1)) }));
  return new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } });
}

/** In a worker process: serves the queue each message names on `target`, over one connection, until told to exit. */
function workerMain(target: Target): void {
  const connection = connect(target);
  serveQueues(async (queue) => {
    const worker = createToolWorker({ connection, queue, prefix: PREFIX, concurrency: CONCURRENCY, secret: SECRET, tools: [implementTool(noop, ({ x }) => x)] });
    await worker.ready();
    return () => worker.close();
  }, () => connection.disconnect());
}

/** One round's calls on `queue` (served by the target's workers): all at once, or one at a time; each call's latency. */
async function run(connection: Redis | Cluster, queue: string, jobs: number, shape: 'all' | 'serial'): Promise<{ readonly elapsedMs: number; readonly latencies: readonly number[] }> {
  const fleet = remoteTools([noop], { connection, queue, prefix: PREFIX, secret: SECRET });
  try {
    return await noopCalls(createPipeline({ tools: fleet.tools, concurrency: Infinity }), jobs, shape);
  } finally {
    await fleet.close();
    const cleanup = new Queue(queue, { connection, prefix: PREFIX });
    await cleanup.obliterate({ force: true });
    await cleanup.close();
  }
}

interface Figures {
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
  readonly serialP50: number;
}

async function measure(connection: Redis | Cluster, workers: Workers): Promise<Figures> {
  const round = async (jobs: number, shape: 'all' | 'serial') => {
    const queue = `bench-${randomUUID()}`;
    await workers.serve(queue);
    const measured = await run(connection, queue, jobs, shape);
    if (measured.latencies.length !== jobs) throw new Error(`${measured.latencies.length} results of ${jobs}`);
    return measured;
  };
  const all = await round(JOBS, 'all');
  const serial = await round(SERIAL, 'serial');
  return { rate: (JOBS / all.elapsedMs) * 1000, p50: percentile(all.latencies, 50), p99: percentile(all.latencies, 99), serialP50: percentile(serial.latencies, 50) };
}

async function main(): Promise<void> {
  printHeader(`fleet on a single Redis and on a Redis Cluster: ${JOBS} no-op calls, ${WORKERS} worker processes × concurrency ${CONCURRENCY}`);
  const redis = await startRedis();
  const cluster = await startRedisCluster().catch(async (error: unknown) => {
    await redis.stop();
    throw error;
  });
  const targets: readonly Target[] = [
    { kind: 'single', address: redis.url },
    { kind: 'cluster', address: cluster.nodes.map((node) => `${node.host}:${node.port}`).join(',') },
  ];
  const fleets = new Map<Kind, Workers>();
  const connections = new Map<Kind, Redis | Cluster>();
  try {
    console.log(`single: ${redis.url}; cluster: 3 masters, ${targets[1]!.address}; prefix ${PREFIX}; ${WARMUP} warm-up round, ${ROUNDS} measured; load ${loadavg().map((l) => fmt(l, 2)).join(' ')}`);
    for (const target of targets) {
      fleets.set(target.kind, Workers.start(WORKERS, ['worker', target.kind, target.address]));
      connections.set(target.kind, connect(target));
    }
    const figures = new Map<Kind, Figures[]>(targets.map((target) => [target.kind, []]));
    for (let r = 0; r < WARMUP + ROUNDS; r++) {
      for (const target of r % 2 === 0 ? targets : [...targets].reverse()) {
        const measured = await measure(connections.get(target.kind)!, fleets.get(target.kind)!);
        if (r >= WARMUP) figures.get(target.kind)!.push(measured);
      }
    }
    const med = (kind: Kind, key: keyof Figures) => median(figures.get(kind)!.map((f) => f[key]));
    console.log('| target | calls/s | p50 ms | p99 ms | one at a time p50 ms | calls/s per round |');
    console.log('|---|---|---|---|---|---|');
    for (const { kind } of targets) {
      console.log(`| ${kind === 'single' ? 'single Redis' : 'Redis Cluster (3 masters)'} | ${fmt(med(kind, 'rate'), 0)} | ${fmt(med(kind, 'p50'))} | ${fmt(med(kind, 'p99'))} | ${fmt(med(kind, 'serialP50'), 2)} | ${figures.get(kind)!.map((f) => fmt(f.rate, 0)).join(', ')} |`);
    }
    // Also the median of each round's own ratio: the two targets ran back to back in it, under the same load.
    const paired = (key: keyof Figures) => median(figures.get('cluster')!.map((f, r) => f[key] / figures.get('single')![r]![key]));
    console.log(`cluster/single: throughput ${fmt(med('cluster', 'rate') / med('single', 'rate'), 2)}× (median of the rounds' ratios ${fmt(paired('rate'), 2)}×; issue 29 measured 0.85–0.95×), one-at-a-time p50 ${fmt(med('cluster', 'serialP50') / med('single', 'serialP50'), 2)}× (paired ${fmt(paired('serialP50'), 2)}×)`);
  } finally {
    await Promise.all([...fleets.values()].map((workers) => workers.stop()));
    for (const connection of connections.values()) connection.disconnect();
    await cluster.stop();
    await redis.stop();
  }
}

if (process.argv[2] === 'worker') {
  workerMain({ kind: process.argv[3] as Kind, address: process.argv[4]! });
} else {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
