/**
 * The last worker of a queue lost mid-body (SIGKILL), with no other worker left to run BullMQ's stall
 * check: the call is answered within about `noWorkerMs` after the worker's heartbeat and lock lapsed
 * — `outcome_unknown` when the tool is not idempotent, `no_worker` when it is (nothing is left to run
 * it again) — instead of waiting for its `timeoutMs`, and its job is taken out of Redis so that no
 * worker started later runs it. A worker alive, back, or still finishing its body (closing) changes
 * nothing: the job runs or finishes as before. Real Redis, real worker processes.
 */
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { RemoteToolError } from '../../src/bullmq/index.js';
import { createPipeline, toolContract, type ToolResult } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { stretched } from '../support/timing.js';
import { now } from './support/fleetTools.js';
import { until, useFleet, useQueueView, WITH_REDIS, type QueueView } from './support/fleet.js';

requireRedis();

/** Short locks and a short noWorkerMs keep it fast; the calls' own limit is far above both. */
const LOCK_MS = 1000;
const NO_WORKER_MS = 500;
const TIMEOUT_MS = 60_000;
/**
 * The design's bound after SIGKILL on an idle machine: the heartbeat (and the lock) lapse within
 * `max(1000, lockMs)`, then `noWorkerMs` without a worker, then a presence round (`noWorkerMs / 5`).
 */
const BOUND_MS = Math.max(1000, LOCK_MS) + NO_WORKER_MS + NO_WORKER_MS / 5;

// The workers' tools (test/fleet/support/fleetTools.ts), with a time limit far above the bound.
const input = z.object({ ms: z.int().nonnegative() });
const sleep = toolContract({ name: 'sleep', description: 'Sleep', input, mode: 'parallel', timeoutMs: TIMEOUT_MS });
const sleepIdempotent = toolContract({ name: 'sleep_idempotent', description: 'Sleep', input, mode: 'parallel', idempotent: true, timeoutMs: TIMEOUT_MS });
const items = toolContract({
  name: 'items',
  description: 'Stream numbers',
  input: z.object({ count: z.int().nonnegative(), gapMs: z.int().nonnegative(), failAt: z.int().optional() }),
  mode: 'parallel',
  timeoutMs: TIMEOUT_MS,
});

/** The `RemoteToolError` behind an error result. */
function causeOf(result: ToolResult): RemoteToolError {
  const cause = (result.error as { cause?: unknown } | undefined)?.cause;
  expect(cause, `${result.id}: ${result.status} ${result.content}`).toBeInstanceOf(RemoteToolError);
  return cause as RemoteToolError;
}

describe.skipIf(!redisAvailable())(`the last worker of a queue lost mid-body (${WITH_REDIS})`, () => {
  const suite = useFleet({ workers: 0, queues: [] });
  const q = { unknown: `q-unknown-${randomUUID()}`, noWorker: `q-noworker-${randomUUID()}`, alive: `q-alive-${randomUUID()}`, back: `q-back-${randomUUID()}`, closing: `q-closing-${randomUUID()}` };
  const views = Object.fromEntries(Object.entries(q).map(([key, name]) => [key, useQueueView(suite, name)])) as Record<keyof typeof q, QueueView>;

  const events = (callId: string, e: 'start' | 'end' | 'item') => suite.fleet.events().filter((event) => event.callId === callId && event.e === e);
  /** The id of the job running call `callId` (active now). */
  const activeJobOf = async (view: QueueView, callId: string) => (await view.jobOfCall(callId, ['active']))?.id;

  it('not idempotent: outcome_unknown within about noWorkerMs + lockMs, far below its timeoutMs, a streaming one too; their jobs are gone from Redis', async () => {
    const queue = q.unknown;
    const [worker] = await suite.fleet.start(1, [{ queue, concurrency: 2 }], { lockMs: LOCK_MS });
    const remote = suite.remote([sleep, items], { queue, noWorkerMs: NO_WORKER_MS, reconcileMs: 200 });
    const run = createPipeline({ tools: remote.tools }).run([
      { id: 'body', name: 'sleep', args: { ms: 30_000 } },
      { id: 'stream', name: 'items', args: { count: 1000, gapMs: 50 } },
    ]);
    await until(() => events('body', 'start').length === 1 && events('stream', 'item').length >= 3, 10_000, 'both bodies to run');
    const jobs = [await activeJobOf(views.unknown, 'body'), await activeJobOf(views.unknown, 'stream')];
    const killedAt = now();
    worker!.kill('SIGKILL');
    const [body, stream] = await run;
    const answeredMs = now() - killedAt;
    console.log(`last worker lost: answered outcome_unknown ${answeredMs.toFixed(0)} ms after SIGKILL (noWorkerMs ${NO_WORKER_MS}, lockMs ${LOCK_MS}, bound ${BOUND_MS}; timeoutMs ${TIMEOUT_MS})`);

    for (const result of [body!, stream!]) {
      expect(result, result.content).toMatchObject({ status: 'error', error: { code: 'outcome_unknown' } });
      expect(result.error!.message).toContain(`no worker of queue "${queue}"`);
      expect(result.error!.message).toContain('it is not idempotent, so it was not run again');
    }
    expect(answeredMs).toBeLessThan(Math.min(TIMEOUT_MS / 2, stretched(BOUND_MS + 1500))); // the timeout is 60 s: answered at the bound, not then
    for (const id of jobs) {
      expect(id).toBeDefined();
      expect(await views.unknown.queue.getJob(id!)).toBeUndefined(); // taken out of Redis: no worker can run it later
    }
    expect(events('body', 'start')).toHaveLength(1);
    await remote.close();
  });

  it('idempotent: no_worker naming the queue — nothing is left to run it again — and a worker started afterwards does not run it', async () => {
    const queue = q.noWorker;
    const [worker] = await suite.fleet.start(1, [{ queue, concurrency: 1 }], { lockMs: LOCK_MS });
    const remote = suite.remote([sleepIdempotent], { queue, noWorkerMs: NO_WORKER_MS, reconcileMs: 200 });
    const pipeline = createPipeline({ tools: remote.tools });
    const run = pipeline.run([{ id: 'lost', name: 'sleep_idempotent', args: { ms: 30_000 } }]);
    await until(() => events('lost', 'start').length === 1, 10_000, 'the body to start');
    const job = await activeJobOf(views.noWorker, 'lost');
    const killedAt = now();
    worker!.kill('SIGKILL');
    const [result] = await run;
    const answeredMs = now() - killedAt;
    console.log(`last worker lost: answered no_worker ${answeredMs.toFixed(0)} ms after SIGKILL (noWorkerMs ${NO_WORKER_MS}, lockMs ${LOCK_MS}, bound ${BOUND_MS})`);

    const cause = causeOf(result!);
    expect(cause).toMatchObject({ code: 'no_worker', queue, jobId: job });
    expect(result!.content).toContain('was lost');
    expect(result!.content).toContain(`no worker of queue "${queue}" (prefix "${suite.fleet.prefix}") is left to run it again`);
    expect(result!.content).toContain(`createToolWorker({ queue: '${queue}'`);
    expect(answeredMs).toBeLessThan(Math.min(TIMEOUT_MS / 2, stretched(BOUND_MS + 1500)));
    expect(await views.noWorker.queue.getJob(job!)).toBeUndefined();

    // A worker appears: it runs the next call, never the lost one again.
    await suite.fleet.start(1, [{ queue, concurrency: 1 }], { lockMs: LOCK_MS });
    const [later] = await pipeline.run([{ id: 'later', name: 'sleep_idempotent', args: { ms: 1 } }]);
    expect(later).toMatchObject({ status: 'ok' });
    await new Promise((resolve) => setTimeout(resolve, 2 * LOCK_MS)); // a stall check would have found it by now
    expect(events('lost', 'start')).toHaveLength(1);
  });

  /** Runs an idempotent call of `ms` on `queue`, SIGKILLs the worker that started it, and runs `then`; the result and the runs. */
  async function killThen(queue: string, then: () => Promise<unknown>, options: { readonly noWorkerMs: number }) {
    const remote = suite.remote([sleepIdempotent], { queue, reconcileMs: 200, ...options });
    const id = `idem-${randomUUID()}`;
    const run = createPipeline({ tools: remote.tools }).run([{ id, name: 'sleep_idempotent', args: { ms: 1500 } }]);
    await until(() => events(id, 'start').length === 1, 10_000, 'the body to start');
    const victim = suite.fleet.workers.find((child) => child.pid === events(id, 'start')[0]!.pid)!;
    victim.kill('SIGKILL');
    await then();
    const [result] = await run;
    const answeredAt = now();
    return { result: result!, answeredAt, starts: events(id, 'start'), ends: events(id, 'end') };
  }

  /** Nothing was answered early: the call is the second run's value, answered after that run ended. */
  function expectTakenOver({ result, answeredAt, starts, ends }: Awaited<ReturnType<typeof killThen>>, survivors: readonly ChildProcess[]) {
    expect(result, result.content).toMatchObject({ status: 'ok' });
    expect(starts).toHaveLength(2); // the body ran twice at most: once on the lost worker, once on its successor
    expect(survivors.map((child) => child.pid)).toContain(starts[1]!.pid);
    expect((result.value as { pid: number }).pid).toBe(starts[1]!.pid);
    expect(answeredAt).toBeGreaterThanOrEqual(ends.find((end) => end.pid === starts[1]!.pid)!.t);
  }

  it('a second worker alive throughout: its stall check runs the job again, the call is ok', async () => {
    const queue = q.alive;
    await suite.fleet.start(2, [{ queue, concurrency: 1 }], { lockMs: LOCK_MS });
    const taken = await killThen(queue, async () => undefined, { noWorkerMs: NO_WORKER_MS });
    const survivors = suite.fleet.workers.filter((child) => child.exitCode === null && child.signalCode === null);
    expectTakenOver(taken, survivors);
  });

  it('a worker started again after the only one died, within noWorkerMs: it takes the job over, the call is ok', async () => {
    const queue = q.back;
    await suite.fleet.start(1, [{ queue, concurrency: 1 }], { lockMs: LOCK_MS });
    let successor: ChildProcess[] = [];
    // Generous: the new process must be up before noWorkerMs ran out, on a loaded machine too.
    const noWorkerMs = Math.round(stretched(8000));
    const taken = await killThen(queue, async () => (successor = await suite.fleet.start(1, [{ queue, concurrency: 1 }], { lockMs: LOCK_MS })), { noWorkerMs });
    expectTakenOver(taken, successor);
  });

  it('a worker closing while its body runs (its heartbeat gone, its lock held far past noWorkerMs): the body finishes, the call is ok, run once', async () => {
    const queue = q.closing;
    const [worker] = await suite.fleet.start(1, [{ queue, concurrency: 1 }], { lockMs: LOCK_MS });
    const remote = suite.remote([sleep], { queue, noWorkerMs: NO_WORKER_MS, reconcileMs: 200 });
    const run = createPipeline({ tools: remote.tools }).run([{ id: 'finishing', name: 'sleep', args: { ms: 3000 } }]);
    await until(() => events('finishing', 'start').length === 1, 10_000, 'the body to start');
    worker!.kill('SIGTERM'); // closes: deletes its heartbeat at once, keeps its lock while the body ends
    const [result] = await run;
    expect(result, result!.content).toMatchObject({ status: 'ok', value: { pid: worker!.pid } });
    expect(events('finishing', 'start')).toHaveLength(1);
    expect(events('finishing', 'end')).toHaveLength(1);
  });
});
