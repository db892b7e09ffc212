import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RedisClient } from './fleetRedis.js';
import type { FleetKeys } from './fleetKeys.js';

/** The shortest life of a heartbeat, whatever a worker's `lockMs`: a loaded machine's timers lag by hundreds of ms. */
const MIN_HEARTBEAT_MS = 1000;

/**
 * How long a worker's heartbeat lives after each refresh: its lock's duration (at least a second). A
 * worker whose heartbeat lapsed — dead, cut off from Redis, its event loop blocked — is one whose job
 * locks lapse as well: it is lost as a worker in both senses at once.
 */
export function heartbeatMs(lockMs: number): number {
  return Math.max(MIN_HEARTBEAT_MS, lockMs);
}

/**
 * One beat: the worker's key with its time to live, its id in the queue's set of workers, and the set
 * kept at least as long as this key (never shortened by a worker with a shorter life).
 */
const BEAT = `
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1`;

/**
 * A worker's heartbeat on its queue (`FleetKeys.worker`): what tells an agent that the queue has a live
 * worker — busy or idle — without `CLIENT LIST` (disabled on managed Redis). Written before the worker
 * takes its first job, refreshed every third of its life on an unref'd timer (so it never holds a
 * process open), deleted when the worker closes.
 */
export class WorkerHeartbeat {
  readonly id = randomUUID();
  #timer: NodeJS.Timeout | undefined = undefined;
  /** A beat Redis has not answered yet (Redis away: the next one waits for it rather than queue up). */
  #pending = false;
  #stopped = false;

  constructor(
    private readonly commands: RedisClient,
    private readonly keys: FleetKeys,
    private readonly ttlMs: number,
    private readonly concurrency: number,
  ) {}

  /** Sends the first beat and resolves once Redis has it; the refreshes follow by themselves. */
  async start(): Promise<void> {
    await this.#beat();
    if (this.#stopped) return;
    this.#timer = setInterval(() => void this.#beat().catch(() => undefined), Math.floor(this.ttlMs / 3));
    this.#timer.unref();
  }

  /** Stops the refreshes and deletes the heartbeat: agents see at once that this worker takes no more jobs. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.commands.multi().del(this.keys.worker(this.id)).srem(this.keys.workers, this.id).exec().catch(() => undefined);
  }

  async #beat(): Promise<void> {
    if (this.#pending || this.#stopped) return;
    this.#pending = true;
    try {
      const info = JSON.stringify({ host: hostname(), pid: process.pid, concurrency: this.concurrency });
      await this.commands.eval(BEAT, 2, this.keys.workers, this.keys.worker(this.id), this.id, info, this.ttlMs);
    } finally {
      this.#pending = false;
    }
  }
}

/**
 * How many workers of a queue are alive, and the longest any of them stays so without another beat,
 * from their heartbeats, in one round trip (O(workers)); the ids of lapsed heartbeats are dropped from
 * the set on the way.
 */
const LIVE_WORKERS = `
local live, longest = 0, 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local ttl = redis.call('PTTL', ARGV[1] .. id)
  if ttl == -2 then
    redis.call('SREM', KEYS[1], id)
  else
    live = live + 1
    if ttl > longest then longest = ttl end
  end
end
return {live, longest}`;

/** The live workers of a queue, read from their heartbeats: how many, and for how long at least (ms) one of them is known alive. */
export interface LiveWorkers {
  readonly count: number;
  readonly aliveForMs: number;
}

export async function liveWorkers(commands: RedisClient, keys: FleetKeys): Promise<LiveWorkers> {
  const [count, aliveForMs] = (await commands.eval(LIVE_WORKERS, 1, keys.workers, keys.workerPrefix)) as [number, number];
  return { count, aliveForMs };
}
