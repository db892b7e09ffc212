/**
 * The fleet on a Redis Cluster (issue 29), as a user runs it: an ioredis `Cluster` as the connection of
 * the agent and of two worker processes, a hash-tagged prefix. Remote calls are served by both
 * workers; a fleet limit of 1 holds across them; a cancel reaches the body on its worker, and a job
 * still waiting is removed and never runs; the agent's `close()` leaves the caller's `Cluster` open.
 * Last, a worker SIGKILLed mid-body, as test/fleet/workerDeath.test.ts on a single Redis: its lock
 * lapses on the cluster, an idempotent call's job runs once more on the other worker and is ok, any other
 * call is `outcome_unknown` and its body ran exactly once. One file, one set of worker processes (they
 * take seconds to start on a busy machine): the kills come last.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteTools, setFleetLimits, type RemoteTools } from '../../../src/bullmq/index.js';
import { createPipeline } from '../../../src/index.js';
import { redisClusterAvailable, requireRedisCluster, startRedisCluster, type RedisClusterHandle } from '../../support/redisCluster.js';
import { stretched } from '../../support/timing.js';
import { sleep, sleepIdempotent } from '../support/contracts.js';
import { now } from '../support/fleetTools.js';
import { maxOverlap, SECRET, until } from '../support/fleet.js';
import { CLUSTER_OPTIONS, clusterFleet, type ClusterFleet, WITH_CLUSTER } from './scenarios.support.js';

requireRedisCluster();

/** Short locks keep the worker deaths fast; the bound of their notice scales with them. */
const LOCK_MS = 1000;
const BOUND_MS = 2 * LOCK_MS;

describe.skipIf(!redisClusterAvailable())(`the fleet on a Redis Cluster: two workers, a fleet limit, cancel, a worker SIGKILLed (${WITH_CLUSTER})`, () => {
  const wide = `q-${randomUUID()}`;
  /** Limited to one body at a time over the whole fleet (setFleetLimits), though each worker takes 2. */
  const narrow = `q-${randomUUID()}`;
  let handle: RedisClusterHandle;
  let fleet: ClusterFleet;
  let cluster: Cluster;
  let remote: RemoteTools;
  let limited: RemoteTools;

  beforeAll(async () => {
    handle = await startRedisCluster();
    fleet = clusterFleet(handle);
    await fleet.start(2, [{ queue: wide, concurrency: 2 }, { queue: narrow, concurrency: 2 }], { lockMs: LOCK_MS });
    cluster = handle.cluster(CLUSTER_OPTIONS);
    remote = remoteTools([sleep, sleepIdempotent], { connection: cluster, queue: wide, prefix: fleet.prefix, secret: SECRET, reconcileMs: 200 });
    limited = remoteTools([sleep], { connection: cluster, queue: narrow, prefix: fleet.prefix, secret: SECRET });
    await setFleetLimits({ connection: cluster, queue: narrow, prefix: fleet.prefix, concurrency: 1 });
  });
  afterAll(async () => {
    await remote?.close();
    await limited?.close();
    await fleet?.stop();
    cluster?.disconnect();
    await handle?.stop();
  });

  const starts = (callId: string) => fleet.events().filter((event) => event.callId === callId && event.e === 'start');
  const started = (callId: string) => starts(callId).length > 0;
  const abortSeen = (callId: string) => fleet.events().find((event) => event.callId === callId && event.e === 'abort');

  it('remote calls are answered, by both worker processes', async () => {
    // Four overlapping bodies, two slots per worker: both must take some.
    const calls = Array.from({ length: 4 }, (_, i) => ({ id: `both-${i}-${randomUUID()}`, name: 'sleep', args: { ms: 300 } }));
    const results = await createPipeline({ tools: remote.tools, concurrency: 4 }).run(calls);
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    const pids = new Set(results.map((r) => (r.value as { pid: number }).pid));
    expect(pids).toEqual(new Set(fleet.workers.map((worker) => worker.pid)));
  });

  it('a fleet limit of 1 holds across both worker processes', async () => {
    const calls = Array.from({ length: 4 }, (_, i) => ({ id: `one-${i}-${randomUUID()}`, name: 'sleep', args: { ms: 150 } }));
    const results = await createPipeline({ tools: limited.tools, concurrency: 4 }).run(calls);
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    const ids = new Set(calls.map((call) => call.id));
    const events = fleet.events().filter((event) => ids.has(event.callId));
    expect(events.filter((event) => event.e === 'start')).toHaveLength(4);
    expect(maxOverlap(events)).toBe(1);
  });

  it('the run\'s signal aborts an active job\'s body on its worker process', async () => {
    const id = `abort-${randomUUID()}`;
    const controller = new AbortController();
    const run = createPipeline({ tools: remote.tools }).run([{ id, name: 'sleep', args: { ms: 10_000 } }], { signal: controller.signal });
    await until(() => started(id), 5000, `${id} to start`);
    const abortedAt = now();
    controller.abort();
    const [result] = await run;
    expect(result).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', reason: 'aborted', started: true } });
    await until(() => abortSeen(id) !== undefined, 5000, `${id}'s body to see its signal`);
    console.log(`remote cancel on a Redis Cluster → the worker body's signal: ${(abortSeen(id)!.t - abortedAt).toFixed(1)} ms`);
    expect(abortSeen(id)!.t - abortedAt).toBeLessThan(stretched(1000)); // the target is 50 ms; this only catches a cancel that does not travel
  });

  it('a waiting job (behind the fleet limit) is removed and never runs', async () => {
    const queue = new Queue(narrow, { connection: cluster, prefix: fleet.prefix });
    try {
      const [busy, waiting] = [`busy-${randomUUID()}`, `waiting-${randomUUID()}`];
      const pipeline = createPipeline({ tools: limited.tools });
      const first = pipeline.run([{ id: busy, name: 'sleep', args: { ms: 400 } }]);
      await until(() => started(busy), 5000, 'the busy call to start');
      const controller = new AbortController();
      const second = pipeline.run([{ id: waiting, name: 'sleep', args: { ms: 1 } }], { signal: controller.signal });
      // Its job gets into the queue, behind the busy one (polled: on a busy machine its add takes a while).
      const deadline = Date.now() + stretched(5000);
      while ((await queue.getWaitingCount()) !== 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await queue.getWaitingCount()).toBe(1);
      controller.abort();
      expect((await second)[0]).toMatchObject({ status: 'cancelled', error: { started: true } });
      expect((await first)[0]).toMatchObject({ status: 'ok' });
      await new Promise((resolve) => setTimeout(resolve, 200)); // time it would have had to start
      expect(started(waiting)).toBe(false);
      expect(await queue.getWaitingCount()).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('closing remote tools leaves the caller\'s Cluster open', async () => {
    const own = remoteTools([sleep], { connection: cluster, queue: wide, prefix: fleet.prefix, secret: SECRET });
    const [result] = await createPipeline({ tools: own.tools }).run([{ id: `own-${randomUUID()}`, name: 'sleep', args: { ms: 1 } }]);
    expect(result).toMatchObject({ status: 'ok' });
    await own.close();
    expect(cluster.status).toBe('ready');
    expect(await cluster.set(`${fleet.prefix}:still-open`, '1')).toBe('OK');
  });

  /** Runs `tool` on the wide queue and SIGKILLs the worker process that started it; the result, and when. */
  async function killMidBody(tool: string, id: string) {
    const run = createPipeline({ tools: remote.tools }).run([{ id, name: tool, args: { ms: 1500 } }]);
    await until(() => starts(id).length === 1, 5000, `${id} to start`);
    const victim = fleet.workers.find((child) => child.pid === starts(id)[0]!.pid)!;
    const killedAt = now();
    victim.kill('SIGKILL');
    let answeredAt = Infinity;
    const [result] = await run.then((results) => ((answeredAt = now()), results));
    return { result: result!, killedAt, answeredAt };
  }

  it('a worker SIGKILLed mid-body: an idempotent tool\'s job runs once more, on the other worker, and the call is ok', async () => {
    const id = `idem-${randomUUID()}`;
    const { result, killedAt } = await killMidBody('sleep_idempotent', id);
    expect(result).toMatchObject({ status: 'ok' });
    const [first, second] = starts(id);
    expect(starts(id)).toHaveLength(2);
    expect(second!.pid).not.toBe(first!.pid);
    expect((result.value as { pid: number }).pid).toBe(second!.pid);
    console.log(`on a Redis Cluster, worker death noticed (the job started again) ${(second!.t - killedAt).toFixed(0)} ms after SIGKILL (lockMs ${LOCK_MS})`);
    expect(second!.t - killedAt).toBeLessThan(BOUND_MS + stretched(1500));
  });

  it('a worker SIGKILLed mid-body: any other tool\'s call is outcome_unknown, and its body ran exactly once', async () => {
    await fleet.start(1, [{ queue: wide, concurrency: 2 }], { lockMs: LOCK_MS }); // two alive again
    const id = `once-${randomUUID()}`;
    const { result, killedAt, answeredAt } = await killMidBody('sleep', id);
    expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown' } });
    console.log(`on a Redis Cluster, worker death answered outcome_unknown ${(answeredAt - killedAt).toFixed(0)} ms after SIGKILL (lockMs ${LOCK_MS})`);
    expect(answeredAt - killedAt).toBeLessThan(BOUND_MS + stretched(1500));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(starts(id)).toHaveLength(1);
  });
});
