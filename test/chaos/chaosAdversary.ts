/**
 * The adversary of the chaos suite's phase 2: someone with access to the fleet's Redis (a script, a
 * dashboard, an intruder), acting while agents and workers are killed and stalled. Each of its moves
 * targets a real job of the run:
 * - **forged**: a waiting job moved to completed through raw Redis, with a value shaped like the call's
 *   own (its call, a pid, a run nonce) under a made-up signature;
 * - **copied**: a waiting job taken through BullMQ's API (a worker without the secret) and completed
 *   with another job's genuine, signed return value;
 * - **re-added**: a completed job of a non-idempotent tool removed and added again under its id, with
 *   the same signed data;
 * - **retried**: a completed job of a non-idempotent tool retried from completed, its attempt counters reset.
 * It records what it did; the checks find out whether any of it got through.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { FaultWindow } from './chaosFaults.js';
import type { Random } from './chaosRandom.js';
import { callKey, specOf, type BodyValue } from './chaosTools.js';

/** A result the adversary planted on a job: the value it carries, for the call the job is for. */
export interface Planted {
  readonly how: 'forged' | 'copied';
  readonly jobId: string;
  readonly call: string;
  readonly value: unknown;
}

/** A signed job the adversary made run again. */
export interface Replayed {
  readonly how: 're-added' | 'retried';
  readonly jobId: string;
  readonly call: string;
}

/** A waiting job moved to completed with `ARGV[2]` as its return value, atomically: only if it still waits. */
const COMPLETE_BY_HAND = `
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[3], 'returnvalue', ARGV[2], 'processedOn', ARGV[3], 'finishedOn', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('XADD', KEYS[4], '*', 'event', 'completed', 'jobId', ARGV[1], 'returnvalue', ARGV[2])
return 1`;

interface JobData {
  readonly tool: string;
  readonly callId: string;
  readonly turn: string | null;
}

const callOf = (job: Job) => callKey((job.data as JobData).turn ?? '', (job.data as JobData).callId);

export class Adversary {
  readonly planted: Planted[] = [];
  readonly replayed: Replayed[] = [];
  readonly #queue: Queue;
  /** A BullMQ worker without a processor (nor the secret): it takes jobs by hand. */
  readonly #byHand: Worker;
  readonly #redis: Redis;
  /** Jobs whose result it wrote: never taken for genuine ones. */
  readonly #touched = new Set<string>();

  constructor(
    url: string,
    prefix: string,
    queue: string,
    private readonly random: Random,
  ) {
    this.#queue = new Queue(queue, { connection: { url }, prefix });
    this.#byHand = new Worker(queue, null, { connection: { url }, prefix, lockDuration: 10_000 });
    this.#redis = new Redis(url);
    this.#queue.on('error', () => undefined);
    this.#byHand.on('error', () => undefined);
    this.#redis.on('error', () => undefined);
  }

  /** Makes a move every `gapMs` while `window` is open (a move with no job to act on is tried again for a few seconds). */
  async run(window: FaultWindow, gapMs: readonly [number, number]): Promise<void> {
    const moves = [() => this.forge(), () => this.copy(), () => this.replay('re-added'), () => this.replay('retried')];
    while (window.open()) {
      await sleep(this.random.int(...gapMs));
      const move = this.random.pick(moves);
      for (let tries = 0; tries < 100 && window.open(); tries++) {
        if (await move().catch(() => false)) break;
        await sleep(25);
      }
    }
  }

  /** A waiting job, completed through raw Redis with a value of its call's shape and a made-up signature. */
  async forge(): Promise<boolean> {
    // Not a job it replayed: that one is for a genuine worker to refuse.
    const waiting = (await this.#redis.lrange(this.#queue.keys.wait!, 0, -1)).filter((id) => !this.replayed.some((replay) => replay.jobId === id));
    if (waiting.length === 0) return false;
    const jobId = this.random.pick(waiting);
    const job = await this.#queue.getJob(jobId);
    if (job === undefined) return false;
    const call = callOf(job);
    const value: BodyValue = { call, pid: process.pid, run: `forged-${this.planted.length}` };
    const returned = JSON.stringify({ k: 'v', value, sig: 'A'.repeat(43) });
    const { wait, completed, events } = this.#queue.keys;
    const done = await this.#redis.eval(COMPLETE_BY_HAND, 4, wait!, completed!, this.#queue.toKey(jobId), events!, jobId, returned, Date.now());
    if (done !== 1) return false;
    this.#touched.add(jobId);
    this.planted.push({ how: 'forged', jobId, call, value });
    return true;
  }

  /** The next waiting job, taken by hand and completed with another job's genuine return value. */
  async copy(): Promise<boolean> {
    const genuine = await this.#genuineCompleted(() => true);
    if (genuine === undefined) return false;
    const token = randomUUID();
    const victim = await this.#byHand.getNextJob(token, { block: false });
    if (victim === undefined) return false;
    // The next waiting job may be one it replayed (more often on a busy machine, where jobs wait longer):
    // taken by hand, no genuine worker gets to refuse it, so it no longer counts as a replay.
    const replay = this.replayed.findIndex((each) => each.jobId === victim.id);
    if (replay !== -1) this.replayed.splice(replay, 1);
    this.#touched.add(victim.id!);
    await victim.moveToCompleted(genuine.returnvalue, token, false);
    this.planted.push({ how: 'copied', jobId: victim.id!, call: callOf(victim), value: (genuine.returnvalue as { value: unknown }).value });
    return true;
  }

  /** A completed job of a non-idempotent tool, run again: removed and re-added under its id, or retried with its counters reset. */
  async replay(how: Replayed['how']): Promise<boolean> {
    const job = await this.#genuineCompleted((data) => !specOf(data.tool).idempotent);
    if (job === undefined) return false;
    this.#touched.add(job.id!);
    if (how === 're-added') {
      await job.remove();
      await this.#queue.add(job.name, job.data, { jobId: job.id!, attempts: 1 });
    } else {
      await job.retry('completed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    }
    this.replayed.push({ how, jobId: job.id!, call: callOf(job) });
    return true;
  }

  /** A completed job a genuine worker ran for its own call (not one it touched), of a tool `accept` takes. */
  async #genuineCompleted(accept: (data: JobData) => boolean): Promise<Job | undefined> {
    const completed = await this.#queue.getJobs(['completed'], 0, 200);
    const genuine = completed.filter((job) => {
      if (job?.id === undefined || this.#touched.has(job.id) || !accept(job.data as JobData)) return false;
      const value = (job.returnvalue as { value?: Partial<BodyValue> } | null)?.value;
      return value?.call === callOf(job);
    });
    return genuine.length === 0 ? undefined : this.random.pick(genuine);
  }

  /** How each replayed job ended, by id: BullMQ's state and failed reason. */
  async replayOutcomes(): Promise<Map<string, string>> {
    const outcomes = new Map<string, string>();
    for (const { jobId } of this.replayed) {
      const job = await this.#queue.getJob(jobId);
      outcomes.set(jobId, job === undefined ? 'gone' : `${await job.getState()}${job.failedReason === undefined ? '' : `: ${job.failedReason.split('\n')[0]}`}`);
    }
    return outcomes;
  }

  /** Whether the queue has no job waiting or running. */
  async idle(): Promise<boolean> {
    const counts = await this.#queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
    return Object.values(counts).every((n) => n === 0);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.#byHand.close(), this.#queue.close()]);
    this.#redis.disconnect();
  }
}
