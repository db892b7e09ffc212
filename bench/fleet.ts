/**
 * Fleet bench: tool bodies on 2 worker processes through BullMQ on Redis (issue 13): toolstream's
 * remote tools (`pipeline.operator()` with `remoteTools`, `createToolWorker`) side by side with **plain
 * BullMQ** (a Queue, a QueueEvents and a Worker) in the same run, the ratio toolstream/plain printed
 * (target ≤ 1.4 with signed results, issue 23; 1.3 before), and the cancel round trip (target p99 ≤ 50
 * ms). toolstream runs twice per round: with a contract that is not idempotent (the default), each job
 * pays the signed request, the run record a worker takes before the body (one more Redis round trip)
 * and the signed result with its check; with an idempotent one (`idempotent: true`), everything but the
 * run record.
 *
 * Set-up: the Redis of `REDIS_URL`, else a `redis-server` of its own on a free loopback port (no
 * persistence); 2 worker child processes (this file, run with `worker`), concurrency 10 each, on a
 * queue of their own for each round. Everything started is stopped, on error too.
 *
 * Workloads, per side:
 * 1. Throughput: JOBS no-op jobs from one producer, all dispatched at once (one `queue.add` each, as a
 *    pipeline dispatches one job per call): jobs/s over the round, and each job's dispatch-to-result
 *    latency (from just before its `add` to the moment the producer has its result: under this load
 *    mostly the time it waited in the queue).
 * 2. One at a time: SERIAL jobs, each dispatched once the previous result is in: the latency of one job
 *    on an idle fleet.
 *
 * Results are collected as a careful producer must, since `QueueEvents` reads a capped stream and can
 * lose completions (issue 13): `completed`/`failed` events from a QueueEvents started (and ready) before
 * the first dispatch, plus a reconciliation — whenever no event arrived for RECONCILE_MS while jobs are
 * outstanding, the producer asks Redis for each outstanding job's state (`getJob` + `getState`) and
 * takes the result of those that finished, so a lost event costs RECONCILE_MS, never the round. Results found that way are counted and printed
 * (their latency is the time they were found). Every job's result is checked.
 *
 * Method: WARMUP rounds, then ROUNDS measured, the sides alternating within each round; medians of the
 * rounds' figures (p50/p99 computed per round). Figures are printed, never asserted.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Queue, QueueEvents, Worker, type ConnectionOptions } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { createPipeline, implementTool, toolContract } from '../src/index.js';
import { createToolWorker, remoteTools } from '../src/bullmq/index.js';
import { startRedis } from '../test/support/redis.js';
import { fmt, median, printHeader } from './common.js';
import { noopCalls, percentile, serveQueues, Workers } from './fleetCommon.js';

const WARMUP = 1;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const JOBS = Number(process.env['FLEET_JOBS'] ?? 10_000);
const SERIAL = 500;
const WORKERS = 2;
const CONCURRENCY = 10;
const RECONCILE_MS = 200;
const CANCELS = 50;

/** What a round of one side is given: a Redis, and a queue its workers already serve. */
interface Round {
  readonly connection: ConnectionOptions;
  readonly queue: string;
  readonly jobs: number;
  /** `all`: dispatched at once; `serial`: each once the previous result is in. */
  readonly shape: 'all' | 'serial';
}

/** What a round measured. */
interface Measured {
  readonly elapsedMs: number;
  /** Dispatch-to-result, per job, in ms. */
  readonly latencies: readonly number[];
  /** Results the event stream did not deliver, found by asking for job state (`undefined`: not seen from outside). */
  readonly reconciled: number | undefined;
}

/** One side of the comparison: how its workers start (in the worker process), and how a round runs. */
interface Side {
  readonly name: string;
  /** In a worker process: serves `queue` with `concurrency` no-op bodies; resolves to its stop. */
  readonly serve: (connection: ConnectionOptions, queue: string, concurrency: number) => Promise<() => Promise<void>>;
  /** In the producer: dispatches `round.jobs` no-op calls and collects every result. */
  readonly run: (round: Round) => Promise<Measured>;
}

/** The plain BullMQ side: a Worker with a no-op processor, a Queue and a QueueEvents. */
const plainBullMQ: Side = {
  name: 'plain BullMQ',
  async serve(connection, queue, concurrency) {
    const worker = new Worker(queue, async (job) => (job.data as { x: number }).x, { connection, concurrency });
    await worker.waitUntilReady();
    return () => worker.close();
  },
  async run({ connection, queue: name, jobs, shape }) {
    const queue = new Queue(name, { connection });
    const events = new QueueEvents(name, { connection });
    try {
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
      const collector = new Collector(queue);
      events.on('completed', ({ jobId, returnvalue }) => collector.settle(jobId, returnvalue));
      events.on('failed', ({ jobId, failedReason }) => collector.fail(jobId, failedReason));
      const started = performance.now();
      if (shape === 'all') {
        await Promise.all(Array.from({ length: jobs }, (_, x) => collector.dispatch(`j${x}`, x)));
        await collector.done();
      } else {
        for (let x = 0; x < jobs; x++) {
          await collector.dispatch(`j${x}`, x);
          await collector.done();
        }
      }
      return { elapsedMs: performance.now() - started, latencies: collector.latencies, reconciled: collector.reconciled };
    } finally {
      await events.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  },
};

/** The contracts toolstream's sides serve: a no-op (not idempotent, or idempotent), and a body that waits for its cancel. */
const noop = toolContract({ name: 'noop', description: 'nothing', input: z.object({ x: z.number() }), mode: 'parallel' });
const idempotentNoop = toolContract({ name: 'noop', description: 'nothing', input: z.object({ x: z.number() }), mode: 'parallel', idempotent: true });
const waitForCancel = toolContract({ name: 'wait_for_cancel', description: 'waits', input: z.object({ key: z.string() }), mode: 'parallel' });
const SECRET = 'a bench secret, at least thirty-two bytes long';
const now = () => performance.timeOrigin + performance.now(); // one clock for the agent and its workers (one machine)

/**
 * toolstream's side: `createToolWorker` in the worker processes, and in the producer a pipeline whose
 * tools are `remoteTools([contract])` — concurrency `Infinity`, so the pool is not the limit (the plain
 * side has every job in flight too). One latency per call: from the calls entering `pipeline.operator()`
 * (all at once, or one at a time) to its result coming out — in model order, as a user gets them.
 */
const toolstreamSideOf = (name: string, contract: typeof noop): Side => ({
  name,
  async serve(connection, queue, concurrency) {
    const redis = new Redis(connection as RedisOptions);
    const worker = createToolWorker({
      connection,
      queue,
      concurrency,
      secret: SECRET,
      tools: [
        implementTool(contract, ({ x }) => x),
        implementTool(waitForCancel, ({ key }, { signal }) =>
          new Promise<never>((_, reject) => {
            void redis.rpush(`${key}:started`, String(now()));
            signal.addEventListener('abort', () => (void redis.rpush(`${key}:aborted`, String(now())), reject(signal.reason)), { once: true });
          }),
        ),
      ],
    });
    await worker.ready();
    return async () => {
      await worker.close();
      redis.disconnect();
    };
  },
  async run({ connection, queue, jobs, shape }) {
    const fleet = remoteTools([contract], { connection, queue, secret: SECRET });
    const pipeline = createPipeline({ tools: fleet.tools, concurrency: Infinity });
    try {
      return { ...(await noopCalls(pipeline, jobs, shape)), reconciled: undefined }; // remoteTools reconciles inside
    } finally {
      await fleet.close();
      const cleanup = new Queue(queue, { connection });
      await cleanup.obliterate({ force: true });
      await cleanup.close();
    }
  },
});
const toolstreamSide = toolstreamSideOf('toolstream', noop);
const idempotentSide = toolstreamSideOf('toolstream, idempotent contract', idempotentNoop);
const SIDES: readonly Side[] = [plainBullMQ, toolstreamSide, idempotentSide];

/**
 * The cancel round trip: a remote body that waits for its signal is cancelled through the run's
 * signal once it has started on its worker; the time from the abort in the agent to the body's signal
 * firing on the worker (both stamped with the machine's clock), per trial.
 */
async function cancelRoundTrip(connection: ConnectionOptions, queue: string): Promise<readonly number[]> {
  const redis = new Redis(connection as RedisOptions);
  const fleet = remoteTools([waitForCancel], { connection, queue, secret: SECRET });
  const pipeline = createPipeline({ tools: fleet.tools });
  const times: number[] = [];
  try {
    for (let trial = 0; trial < CANCELS; trial++) {
      const key = `bench:${queue}:${trial}`;
      const run = new AbortController();
      const done = pipeline.run([{ id: 'w', name: 'wait_for_cancel', args: { key } }], { signal: run.signal });
      await redis.blpop(`${key}:started`, 10);
      const abortedAt = now();
      run.abort();
      const [, firedAt] = (await redis.blpop(`${key}:aborted`, 10)) ?? [];
      const [result] = await done;
      if (firedAt === undefined || result?.status !== 'cancelled') throw new Error(`cancel trial ${trial}: ${result?.content ?? 'no result'}`);
      times.push(Number(firedAt) - abortedAt);
      await redis.del(`${key}:started`, `${key}:aborted`);
    }
    return times;
  } finally {
    await fleet.close();
    redis.disconnect();
  }
}

/** Outstanding jobs of a round: settled by events, or by asking Redis when the events go quiet. */
class Collector {
  readonly latencies: number[] = [];
  reconciled = 0;
  readonly #sent = new Map<string, { readonly at: number; readonly x: number }>();
  #waiting: { resolve: () => void; reject: (error: Error) => void } | undefined;
  #lastEvent = performance.now();
  #timer: NodeJS.Timeout | undefined;
  #checking = false;

  constructor(private readonly queue: Queue) {}

  async dispatch(id: string, x: number): Promise<void> {
    this.#sent.set(id, { at: performance.now(), x });
    await this.queue.add('noop', { x }, { jobId: id, removeOnComplete: false, removeOnFail: false });
  }

  settle(id: string, value: unknown): void {
    this.#lastEvent = performance.now();
    const sent = this.#sent.get(id);
    if (sent === undefined) return; // already settled (an event after a reconciliation)
    if (value !== sent.x) return this.fail(id, `result ${JSON.stringify(value)} for x = ${sent.x}`);
    this.#sent.delete(id);
    this.latencies.push(performance.now() - sent.at);
    if (this.#sent.size === 0) this.#finish();
  }

  fail(id: string, reason: string): void {
    this.#finish(new Error(`job ${id} failed: ${reason}`));
  }

  /** Resolves once every dispatched job has its result. */
  done(): Promise<void> {
    if (this.#sent.size === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#timer = setInterval(() => void this.#reconcile(), RECONCILE_MS);
    });
  }

  /** Asks for the state of outstanding jobs once no event came for RECONCILE_MS. */
  async #reconcile(): Promise<void> {
    // Timers run before the I/O of their loop turn: let events already received be handled first, so
    // a busy producer does not mistake its own backlog for silence.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.#checking || this.#sent.size === 0 || performance.now() - this.#lastEvent < RECONCILE_MS) return;
    this.#checking = true;
    try {
      // A few hundred at a time: their commands share the connection's pipeline.
      const outstanding = [...this.#sent.keys()];
      for (let at = 0; at < outstanding.length; at += 200) {
        await Promise.all(outstanding.slice(at, at + 200).map(async (id) => {
          const job = await this.queue.getJob(id);
          const state = await job?.getState();
          if (state === 'completed' && this.#sent.has(id)) {
            this.reconciled++;
            this.settle(id, job!.returnvalue);
          } else if (state === 'failed') this.fail(id, job!.failedReason);
        }));
      }
    } catch (error) {
      this.#finish(error as Error);
    } finally {
      this.#checking = false;
    }
  }

  #finish(error?: Error): void {
    clearInterval(this.#timer);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (error === undefined) waiting?.resolve();
    else waiting?.reject(error);
  }
}

/** In a worker process: serves the queue each message names, until told to exit (or the producer is gone). */
function workerMain(side: Side, url: string): void {
  const connection = connectionOf(url);
  serveQueues((queue) => side.serve(connection, queue, CONCURRENCY));
}

const connectionOf = (url: string): ConnectionOptions => {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port), maxRetriesPerRequest: null };
};

interface Figures {
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
  readonly serialP50: number;
  readonly serialP99: number;
  readonly reconciled: number | undefined;
}

async function measure(side: Side, workers: Workers, connection: ConnectionOptions): Promise<Figures> {
  const round = async (jobs: number, shape: Round['shape']) => {
    const queue = `bench-${randomUUID()}`;
    await workers.serve(queue);
    const measured = await side.run({ connection, queue, jobs, shape });
    if (measured.latencies.length !== jobs) throw new Error(`${side.name}: ${measured.latencies.length} results of ${jobs}`);
    return measured;
  };
  const all = await round(JOBS, 'all');
  const serial = await round(SERIAL, 'serial');
  return {
    rate: (JOBS / all.elapsedMs) * 1000,
    p50: percentile(all.latencies, 50),
    p99: percentile(all.latencies, 99),
    serialP50: percentile(serial.latencies, 50),
    serialP99: percentile(serial.latencies, 99),
    reconciled: all.reconciled === undefined || serial.reconciled === undefined ? undefined : all.reconciled + serial.reconciled,
  };
}

async function main(): Promise<void> {
  printHeader(`fleet: ${JOBS} no-op jobs, ${WORKERS} worker processes × concurrency ${CONCURRENCY}, BullMQ on Redis`);
  const sides = SIDES;
  const redis = await startRedis();
  const started: Workers[] = [];
  try {
    console.log(`redis: ${process.env['REDIS_URL'] === undefined ? 'a redis-server of its own' : 'REDIS_URL'} (${redis.url}); ${WARMUP} warm-up round, ${ROUNDS} measured; load ${loadavg().map((l) => fmt(l, 2)).join(' ')}`);
    const connection = connectionOf(redis.url);
    const fleets = new Map<Side, Workers>();
    for (const side of sides) {
      const workers = Workers.start(WORKERS, ['worker', side.name, redis.url]);
      started.push(workers);
      fleets.set(side, workers);
    }
    const figures = new Map<Side, Figures[]>(sides.map((side) => [side, []]));
    for (let r = 0; r < WARMUP + ROUNDS; r++) {
      const order = r % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const measured = await measure(side, fleets.get(side)!, connection);
        if (r >= WARMUP) figures.get(side)!.push(measured);
      }
    }
    const med = (side: Side, key: Exclude<keyof Figures, 'reconciled'>) => median(figures.get(side)!.map((f) => f[key]));
    console.log('| side | jobs/s | p50 ms | p99 ms | one at a time p50 ms | p99 ms | results found by reconciling |');
    console.log('|---|---|---|---|---|---|---|');
    for (const side of sides) {
      console.log(`| ${side.name} | ${fmt(med(side, 'rate'), 0)} | ${fmt(med(side, 'p50'))} | ${fmt(med(side, 'p99'))} | ${fmt(med(side, 'serialP50'), 2)} | ${fmt(med(side, 'serialP99'), 2)} | ${figures.get(side)!.map((f) => f.reconciled ?? '(inside remoteTools)').join(', ')} |`);
    }
    for (const side of [toolstreamSide, idempotentSide]) {
      console.log(`${side.name}/plain: time per call ${fmt(med(plainBullMQ, 'rate') / med(side, 'rate'), 2)}× (target ≤ 1.4), one-at-a-time p50 ${fmt(med(side, 'serialP50') / med(plainBullMQ, 'serialP50'), 2)}×`);
    }
    const queue = `bench-cancel-${randomUUID()}`;
    await fleets.get(toolstreamSide)!.serve(queue);
    const times = await cancelRoundTrip(connection, queue);
    console.log(`cancel round trip (abort in the agent → the body's signal on its worker): p50 ${fmt(percentile(times, 50), 2)} ms, p99 ${fmt(percentile(times, 99), 2)} ms (${times.length} cancels; target p99 ≤ 50 ms)`);
  } finally {
    await Promise.all(started.map((workers) => workers.stop()));
    await redis.stop();
  }
}

if (process.argv[2] === 'worker') {
  const side = SIDES.find((s) => s.name === process.argv[3]);
  if (side === undefined) throw new Error(`no side ${process.argv[3]}`);
  workerMain(side, process.argv[4]!);
} else {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
