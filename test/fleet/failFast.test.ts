/**
 * A fleet that fails fast (issue 27): a queue no worker serves answers its calls `no_worker` within
 * seconds — after its job was taken out of the queue, so a worker started later cannot run it — while
 * a fleet that is only busy waits; a worker's heartbeat lapses when it dies and goes when it closes.
 * Real Redis, real worker processes. No bound here is tighter than a loaded machine meets: each is a
 * generous ceiling far below what the call waited before (its timeoutMs, or the pipeline's 5 minutes).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createToolWorker, RemoteToolError, type RemoteTools } from '../../src/bullmq/index.js';
import { createPipeline, implementTool, type ToolResult } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { startTcpProxy } from '../support/tcpProxy.js';
import { echo, sleep } from './support/contracts.js';
import { SECRET, until, useFleet, useQueueView, WITH_REDIS } from './support/fleet.js';

requireRedis();

/** The ceiling of "within seconds": far below the 5 minutes a call without timeoutMs waited before. */
const SECONDS_CEILING_MS = 60_000;

/** The `RemoteToolError` behind an error result. */
function causeOf(result: ToolResult): RemoteToolError {
  const cause = (result.error as { cause?: unknown } | undefined)?.cause;
  expect(cause, `${result.id}: ${result.status} ${result.content}`).toBeInstanceOf(RemoteToolError);
  return cause as RemoteToolError;
}

/** How many live workers `queue` has, once `check` holds (polling the agent's own view). */
async function workersUntil(remote: RemoteTools, queue: string, check: (count: number) => boolean, ms: number): Promise<number> {
  let count = -1;
  const deadline = Date.now() + ms;
  while (!check((count = (await remote.workers())[queue]!))) {
    if (Date.now() > deadline) throw new Error(`queue ${queue} still had ${count} workers after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return count;
}

describe.skipIf(!redisAvailable())(`no worker, busy workers, dead workers (${WITH_REDIS})`, () => {
  const suite = useFleet({ workers: 0, queues: [] });
  const lonely = `q-lonely-${randomUUID()}`;
  const view = useQueueView(suite, lonely);

  it('no worker: the agent warns at start-up, the call fails fast naming the queue, and a worker started afterwards does not run it', async () => {
    const remote = suite.remote([sleep], { queue: lonely }); // noWorkerMs: its default, 5 s
    await until(() => suite.warnings.some((w) => w.code === 'no_worker' && w.queue === lonely), 30_000, 'the start-up warning');
    const warning = suite.warnings.find((w) => w.code === 'no_worker' && w.queue === lonely)!;
    expect(warning.message).toContain(`no worker serves queue "${lonely}"`);

    const pipeline = createPipeline({ tools: remote.tools });
    const startedAt = performance.now();
    const [result] = await pipeline.run([{ id: 'early', name: 'sleep', args: { ms: 1 } }]);
    const tookMs = performance.now() - startedAt;
    console.log(`no worker: the call failed no_worker ${tookMs.toFixed(0)} ms after it was made (noWorkerMs 5000)`);
    const cause = causeOf(result!);
    expect(cause).toMatchObject({ code: 'no_worker', queue: lonely });
    expect(result!.content).toContain(`No worker serves queue "${lonely}"`);
    expect(result!.content).toContain('createToolWorker');
    expect(tookMs).toBeGreaterThanOrEqual(5000); // it gave a worker noWorkerMs to appear
    expect(tookMs).toBeLessThan(SECONDS_CEILING_MS);
    expect(await view.queue.getJob(cause.jobId)).toBeUndefined(); // taken out of the queue, then removed

    // A worker appears: it runs the next call, and never the one already answered (the queue is FIFO:
    // had the first job stayed, it would have run before the second).
    await suite.fleet.start(1, [{ queue: lonely, concurrency: 1 }]);
    expect(await remote.workers()).toEqual({ [lonely]: 1 });
    const [later] = await pipeline.run([{ id: 'later', name: 'sleep', args: { ms: 1 } }]);
    expect(later).toMatchObject({ status: 'ok' });
    const ran = suite.fleet.events().filter((event) => event.e === 'start' && ['early', 'later'].includes(event.callId)).map((event) => event.callId);
    expect(ran).toEqual(['later']);
  });

  it('busy workers: calls wait for them, however long, and never fail fast', async () => {
    const queue = `q-busy-${randomUUID()}`;
    await suite.fleet.start(1, [{ queue, concurrency: 1 }]);
    const remote = suite.remote([sleep], { queue, noWorkerMs: 200 });
    const startedAt = performance.now();
    // One body at a time: the second call waits in the queue ~2 s, ten times noWorkerMs.
    const results = await createPipeline({ tools: remote.tools }).run([
      { id: 'long', name: 'sleep', args: { ms: 2000 } },
      { id: 'queued', name: 'sleep', args: { ms: 1 } },
    ]);
    const tookMs = performance.now() - startedAt;
    expect(results.map((r) => r.status), results.map((r) => r.content).join('; ')).toEqual(['ok', 'ok']);
    expect(tookMs).toBeGreaterThan(2000); // the second did wait behind the first
    expect(suite.warnings.filter((w) => w.code === 'no_worker' && w.queue === queue)).toEqual([]);
  });

  it('a worker that dies: its heartbeat lapses, and the calls after it fail fast; one that closes is gone at once', async () => {
    const queue = `q-dying-${randomUUID()}`;
    const [dying, closing] = await suite.fleet.start(2, [{ queue, concurrency: 1 }], { lockMs: 1000 });
    const remote = suite.remote([sleep], { queue, noWorkerMs: 500 });
    expect(await remote.workers()).toEqual({ [queue]: 2 });

    const closedAt = performance.now();
    closing!.kill('SIGTERM'); // closes its worker: the heartbeat is deleted, not left to lapse
    await workersUntil(remote, queue, (count) => count === 1, SECONDS_CEILING_MS);
    const goneMs = performance.now() - closedAt;

    const killedAt = performance.now();
    dying!.kill('SIGKILL');
    await workersUntil(remote, queue, (count) => count === 0, SECONDS_CEILING_MS);
    const lapsedMs = performance.now() - killedAt;
    console.log(`heartbeats: a closed worker was gone ${goneMs.toFixed(0)} ms after SIGTERM; a killed one lapsed ${lapsedMs.toFixed(0)} ms after SIGKILL (its life: lockMs 1000)`);
    expect(lapsedMs).toBeGreaterThan(0);

    const [result] = await createPipeline({ tools: remote.tools }).run([{ id: 'orphan', name: 'sleep', args: { ms: 1 } }]);
    expect(causeOf(result!)).toMatchObject({ code: 'no_worker', queue });
  });

  it('a worker is ready only once connected, and only then do agents see it', async () => {
    const queue = `q-late-${randomUUID()}`;
    const proxy = await startTcpProxy(suite.redis.url);
    proxy.blackhole(); // Redis out of reach: connections are accepted, nothing is answered
    const worker = createToolWorker({ connection: { url: proxy.url }, queue, prefix: suite.fleet.prefix, secret: SECRET, tools: [implementTool(echo, ({ text }) => text)], connectTimeoutMs: 120_000 });
    try {
      let ready = false;
      const readied = worker.ready().then(() => (ready = true));
      const remote = suite.remote([echo], { queue });
      // Long enough for a worker that calls itself ready unconnected to have done so (it would, at once).
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(ready).toBe(false);
      expect(await remote.workers()).toEqual({ [queue]: 0 });
      proxy.restore();
      await readied;
      expect(await remote.workers()).toEqual({ [queue]: 1 }); // its heartbeat is there by the time it is ready
    } finally {
      await worker.close();
      await proxy.close();
    }
  });
});
