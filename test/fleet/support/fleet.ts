import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Queue, QueueEvents, type Job, type JobType } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { remoteTools, type FleetWarning, type RemoteTools, type RemoteToolsOptions } from '../../../src/bullmq/index.js';
import type { ToolContract } from '../../../src/index.js';
import { REDIS_MISSING, redisAvailable, startRedis, type TestRedis } from '../../support/redis.js';
import { READY_MS, stretched } from '../../support/timing.js';
import type { WorkerEvent } from './fleetTools.js';
import type { WorkerConfig } from './workerProcess.js';

/** For a fleet test file's describe name: what it runs on, or why it is skipped and how to install Redis. */
export const WITH_REDIS = redisAvailable() ? 'real Redis, real worker processes' : `skipped: ${REDIS_MISSING}`;

export const SECRET = 'the fleet tests share this secret, 32+ bytes';

const WORKER = resolve(import.meta.dirname, 'workerProcess.ts');

/** A fleet of worker processes for one test file: their prefix, log directory, and how to stop them. */
export interface TestFleet {
  /** A prefix of its own, so tests sharing a Redis keep apart. */
  readonly prefix: string;
  readonly logDir: string;
  readonly workers: ChildProcess[];
  /**
   * Starts `n` more worker processes on the given queues (each with `concurrency` bodies), once ready;
   * `url` connects them through another address (a proxy in front of the fleet's Redis).
   */
  start(n: number, queues: WorkerConfig['queues'], options?: WorkerOptions): Promise<ChildProcess[]>;
  /** Every event the workers logged so far, in time order. */
  events(): WorkerEvent[];
  /** Empties the workers' logs (they keep appending to the same files). */
  clearEvents(): void;
  /**
   * Stops the workers (SIGTERM: each closes its worker and exits; SIGKILL after 3 s, stretched on a busy machine), deletes the prefix's
   * keys and the logs; resolves with how each stopped.
   */
  stop(): Promise<readonly ProcessExit[]>;
}

/** How a test process stopped: by itself once told (SIGTERM), or killed when it had not in time; and how long it took. */
export interface ProcessExit {
  readonly pid: number | undefined;
  readonly closedItself: boolean;
  readonly ms: number;
}

/** What a test may set on the worker processes it starts. */
export type WorkerOptions = Partial<Pick<WorkerConfig, 'lockMs' | 'maxReruns' | 'url'>>;

/** A new fleet on the Redis at `url` (workers are started with `start`). */
export function testFleet(url: string): TestFleet {
  const prefix = `tsfleet-${randomUUID()}`;
  const logDir = mkdtempSync(join(tmpdir(), 'toolstream-fleet-'));
  const workers: ChildProcess[] = [];
  return {
    prefix,
    logDir,
    workers,
    async start(n, queues, options = {}) {
      const config: WorkerConfig = { url, prefix, secret: SECRET, logDir, queues, ...options };
      // Each one is the fleet's (so `stop` stops it) from the moment it runs, not once it is ready: a
      // set-up that fails or times out while they start leaves none behind.
      const launched = Array.from({ length: n }, () => launchProcess(WORKER, { FLEET_WORKER: JSON.stringify(config) }));
      workers.push(...launched.map(({ child }) => child));
      await Promise.all(launched.map(({ ready }) => ready));
      return launched.map(({ child }) => child);
    },
    events: () => readEvents(logDir),
    clearEvents: () => {
      for (const file of readdirSync(logDir)) if (file.endsWith('.jsonl')) truncateSync(join(logDir, file)); // the workers append (O_APPEND): their next line starts the file
    },
    async stop() {
      const exits = await Promise.all(workers.map(stopProcess));
      await deleteKeys(url, prefix);
      rmSync(logDir, { recursive: true, force: true });
      return exits;
    },
  };
}

/**
 * Runs a TypeScript file of the tests as a process of its own (`node --import tsx`, `env` added to
 * ours); resolves once it printed "ready". Its stderr is ours.
 */
export async function startProcess(script: string, env: Readonly<Record<string, string>>): Promise<ChildProcess> {
  const { child, ready } = launchProcess(script, env);
  await ready;
  return child;
}

/**
 * {@link startProcess}, with the process at once: the caller can stop it while it starts. `ready`
 * rejects (and the process is killed) when it exits first or says nothing within {@link READY_MS}.
 */
export function launchProcess(script: string, env: Readonly<Record<string, string>>): { readonly child: ChildProcess; readonly ready: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const started = ready(child);
  started.catch(() => child.kill('SIGKILL')); // not left behind when it never got ready
  return { child, ready: started };
}

function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`a test process did not get ready in ${READY_MS / 1000} s`)), READY_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('ready')) (clearTimeout(timer), resolvePromise());
    });
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`a test process exited (${code}) before it was ready`))));
  });
}

/** Stops a test process: SIGTERM, then SIGKILL after 3 s (on an idle machine: {@link stretched} on a busy one). */
export async function stopProcess(child: ChildProcess): Promise<ProcessExit> {
  const exit = () => ({ pid: child.pid, closedItself: child.exitCode === 0, ms: performance.now() - startedAt });
  const startedAt = performance.now();
  if (child.exitCode !== null || child.signalCode !== null) return exit();
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), stretched(3000));
  await exited;
  clearTimeout(timer);
  return exit();
}

/** Every event the worker processes logged, in time order (CLOCK_MONOTONIC, one clock for all of them). */
export function readEvents(logDir: string): WorkerEvent[] {
  const events: WorkerEvent[] = [];
  for (const file of readdirSync(logDir)) {
    if (!file.endsWith('.jsonl')) continue;
    const text = readFileSync(join(logDir, file), 'utf8');
    // A read can race a worker's append and see its line torn (the file already longer, its bytes still NUL):
    // only lines ended by their newline are whole; a torn tail is read whole on the next poll.
    for (const line of text.slice(0, text.lastIndexOf('\n') + 1).split('\n')) if (line !== '') events.push(JSON.parse(line) as WorkerEvent);
  }
  return events.sort((a, b) => a.m - b.m);
}

/** The most bodies that ran at once, from the workers' start and end events (of `tools`, when given). */
export function maxOverlap(events: readonly WorkerEvent[], tools?: readonly string[]): number {
  let running = 0;
  let max = 0;
  for (const event of events) {
    if (tools !== undefined && !tools.includes(event.tool)) continue;
    if (event.e === 'start') max = Math.max(max, ++running);
    else if (event.e === 'end') running--;
  }
  return max;
}

/** Each body's run, from the workers' logs: [start, end] by call id, on CLOCK_MONOTONIC (`WorkerEvent.m`). */
export function intervals(events: readonly WorkerEvent[]): Map<string, { readonly tool: string; readonly start: number; readonly end: number }> {
  const runs = new Map<string, { tool: string; start: number; end: number }>();
  for (const event of events) {
    if (event.e === 'start') runs.set(event.callId, { tool: event.tool, start: event.m, end: Infinity });
    else if (event.e === 'end') runs.get(event.callId)!.end = event.m;
  }
  return runs;
}

/** Waits until `check` holds (polling every 2 ms), or fails after `ms` (on an idle machine: {@link stretched} on a busy one). */
export async function until(check: () => boolean, ms = 10_000, what = 'the condition'): Promise<void> {
  const limit = stretched(ms);
  const deadline = Date.now() + limit;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${limit.toFixed(0)} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}

/** What {@link useFleet} gives a test file, set once its `beforeAll` ran. */
export interface FleetSuite {
  readonly redis: TestRedis;
  readonly fleet: TestFleet;
  /** The connection options of the suite's Redis. */
  readonly connection: { readonly url: string };
  /** What the remote tools made by `remote` warned of at start-up (none is printed). */
  readonly warnings: FleetWarning[];
  /** Remote tools on the suite's Redis and prefix with the fleet's secret, closed after the file. */
  remote(contracts: readonly ToolContract[], options: Partial<RemoteToolsOptions> & { readonly queue: RemoteToolsOptions['queue'] }): RemoteTools;
}

/**
 * A fleet test file's setup: a Redis (`own: true` for a private one), `workers` worker processes on
 * `queues`, and remote tools made through `remote`; all stopped, closed and cleaned up after the file.
 */
export function useFleet(setup: { readonly workers: number; readonly queues: WorkerConfig['queues']; readonly lockMs?: number; readonly own?: boolean }): FleetSuite {
  let state: { redis: TestRedis; fleet: TestFleet } | undefined;
  const made: RemoteTools[] = [];
  const warnings: FleetWarning[] = [];
  const get = () => state ?? (() => { throw new Error('useFleet: used before its beforeAll ran'); })();
  beforeAll(async () => {
    const redis = await startRedis({ own: setup.own ?? false });
    const fleet = testFleet(redis.url);
    state = { redis, fleet };
    await fleet.start(setup.workers, setup.queues, setup.lockMs === undefined ? {} : { lockMs: setup.lockMs });
  });
  afterAll(async () => {
    await Promise.all(made.map((remote) => remote.close()));
    await state?.fleet.stop();
    await state?.redis.stop();
  });
  return {
    get redis() {
      return get().redis;
    },
    get fleet() {
      return get().fleet;
    },
    get connection() {
      return { url: get().redis.url };
    },
    warnings,
    remote(contracts, options) {
      const onWarning = (warning: FleetWarning) => void warnings.push(warning);
      const remote = remoteTools(contracts, { connection: { url: get().redis.url }, prefix: get().fleet.prefix, secret: SECRET, onWarning, ...options });
      made.push(remote);
      return remote;
    },
  };
}

/** A test's own view of one queue of a suite, as a script or an intruder with Redis access has it. */
export interface QueueView {
  /** A BullMQ Queue of the name, on the suite's Redis and prefix. */
  readonly queue: Queue;
  /** 'completed', or the job's failed reason, once it finished. */
  outcomeOf(job: Job): Promise<string>;
  /** The job (in one of `states`) whose payload names call `callId`. */
  jobOfCall(callId: string, states?: readonly JobType[]): Promise<Job | undefined>;
}

/** A {@link QueueView} of queue `name` for a fleet test file (register after `useFleet`): ready before the tests, closed after. */
export function useQueueView(suite: FleetSuite, name: string): QueueView {
  let state: { queue: Queue; events: QueueEvents } | undefined;
  const get = () => state ?? (() => { throw new Error('useQueueView: used before its beforeAll ran'); })();
  beforeAll(async () => {
    const options = { connection: suite.connection, prefix: suite.fleet.prefix };
    state = { queue: new Queue(name, options), events: new QueueEvents(name, options) };
    await state.events.waitUntilReady();
  });
  afterAll(async () => {
    await state?.queue.close();
    await state?.events.close();
  });
  return {
    get queue() {
      return get().queue;
    },
    outcomeOf: (job) => job.waitUntilFinished(get().events, 10_000).then(() => 'completed', (error: Error) => error.message),
    async jobOfCall(callId, states = ['completed', 'failed']) {
      return (await get().queue.getJobs([...states])).find((job) => (job.data as { callId?: unknown }).callId === callId);
    },
  };
}
