import { Redis, type RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';

/**
 * The ioredis client of every connection a fleet object opens — ours and, duplicated from them,
 * BullMQ's — so that closing one always ends it, and the object can end all of its connections at once.
 * ioredis leaves a client that waits to reconnect (Redis restarted or gone: no socket, a retry timer)
 * `reconnecting` forever when it is disconnected, never `end` (redis/ioredis#1247, #1830): whatever
 * awaits its end — BullMQ's `QueueEvents.close()` and `Worker.close()` do — waits forever, and commands
 * queued meanwhile never settle. Disconnected in that state, this one ends at once, failing what was
 * queued ("Connection is closed."), as a client with a socket does.
 */
export class FleetRedis extends Redis {
  /** `performance.now()` when it last became ready: a command sent while it was away reached Redis no earlier. */
  readyAt = -Infinity;
  /** Called with each duplicate made of it (by BullMQ, for its blocking reads), so its owner can end them too. */
  onDuplicate: (copy: FleetRedis) => void = () => undefined;

  override disconnect(reconnect = false): void {
    // ioredis ends a client that never connected ('wait') through its close handler, at once: the same
    // path for one that has no socket because it waits to reconnect (its retry timer is cleared by super).
    if (!reconnect && this.status === 'reconnecting') this.status = 'wait';
    super.disconnect(reconnect);
  }

  override duplicate(override?: Partial<RedisOptions>): FleetRedis {
    const copy = track(new FleetRedis({ ...this.options, ...override }));
    copy.onDuplicate = this.onDuplicate;
    this.onDuplicate(copy);
    return copy;
  }
}

function track(redis: FleetRedis): FleetRedis {
  redis.on('ready', () => (redis.readyAt = performance.now()));
  redis.on('error', () => undefined); // ioredis reconnects by itself; commands meanwhile wait (or fail at close)
  return redis;
}

/** How long a connection may take to quit politely before it is disconnected. */
const QUIT_MS = 1000;

/**
 * Every connection one fleet object (an agent's `remoteTools`, a worker) opens, from its connection
 * option: from a given ioredis instance's options (the instance itself is never used, so never closed by
 * us), or from connection options. Commands wait for Redis while it is away (`maxRetriesPerRequest:
 * null`, as BullMQ needs) rather than fail: their callers are bounded by the calls' deadlines and by
 * `close()`, which can end them all ({@link disconnectAll}).
 */
export class FleetConnections {
  readonly #open = new Set<FleetRedis>();

  constructor(private readonly connection: ConnectionOptions) {}

  /** A new connection (given to BullMQ too: the duplicates it makes of it are ours as well). */
  open(): FleetRedis {
    const { url, ...options } = (this.connection instanceof Redis ? this.connection.options : this.connection) as RedisOptions & { url?: unknown };
    const settings: RedisOptions = { ...options, maxRetriesPerRequest: null };
    const redis = track(typeof url === 'string' ? new FleetRedis(url, settings) : new FleetRedis(settings));
    this.#adopt(redis);
    redis.onDuplicate = (copy) => this.#adopt(copy);
    return redis;
  }

  /** Ends every connection at once, whatever it waits for: what was sent and not answered fails. */
  disconnectAll(): void {
    for (const redis of this.#open) redis.disconnect();
    this.#open.clear();
  }

  #adopt(redis: FleetRedis): void {
    this.#open.add(redis);
    redis.once('end', () => this.#open.delete(redis));
  }
}

/**
 * Closes a connection we opened, within about a second whatever Redis does: `QUIT` when it is
 * connected (what it sent before is answered first), else — Redis away, or no answer in time (a
 * connection cut off) — a disconnect, which fails whatever still waits on it.
 */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status !== 'ready') return redis.disconnect();
  try {
    if (!(await settlesWithin(redis.quit(), QUIT_MS))) redis.disconnect();
  } catch {
    redis.disconnect();
  }
}

/**
 * Resolves once `closing` does — or, when it has not after `ms`, once `connections` were all
 * disconnected (which fails what `closing` waits for, so it ends too, but it is not waited for).
 */
export async function boundedClose(closing: Promise<unknown>, ms: number, connections: FleetConnections): Promise<void> {
  try {
    if (!(await settlesWithin(closing.catch(() => undefined), ms))) connections.disconnectAll();
  } finally {
    connections.disconnectAll(); // nothing left open behind a close that returned (BullMQ leaves shared ones to us)
  }
}

/** Whether `promise` settled within `ms` (its rejection, if it came first, rejects this); no timer is left. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
