import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';
import { clusterOf, redisOptionsOf, startupNodesOf } from './fleetOptions.js';
import { RemoteToolError } from './remoteToolError.js';

/** A connection a fleet object opened: to one Redis, or to a Redis Cluster (when it was given a `Cluster`). */
export type FleetClient = FleetRedis | FleetCluster;

/** What a fleet's commands go through: one Redis, or a Redis Cluster (the same commands; keys of a command share a slot). */
export type RedisClient = Redis | Cluster;

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
  onDuplicate: (copy: FleetClient) => void = () => undefined;

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

/**
 * ioredis's `Cluster` as a fleet runs it, for the same reasons as {@link FleetRedis}: its duplicates
 * (BullMQ's blocking connections) are tracked, and disconnecting it always ends it. A `Cluster` with no
 * node connection — waiting to retry (no startup node answered), or not connected yet — has nothing to
 * drain, so `disconnect()` would leave it `disconnecting` forever, never `end`, with its queued
 * commands never settled: disconnected in that state, this one ends at once, failing them.
 */
export class FleetCluster extends Cluster {
  readyAt = -Infinity;
  onDuplicate: (copy: FleetClient) => void = () => undefined;

  constructor(
    /** The startup nodes, kept for duplicates (ioredis keeps its own copy private). */
    readonly startup: readonly ClusterNode[],
    options: ClusterOptions,
  ) {
    super([...startup], options);
  }

  override disconnect(reconnect = false): void {
    if (!reconnect && this.status !== 'end' && this.nodes().length === 0) this.status = 'wait';
    super.disconnect(reconnect);
  }

  override duplicate(overrideStartupNodes: ClusterNode[] = [], overrideOptions: ClusterOptions = {}): FleetCluster {
    const copy = track(new FleetCluster(overrideStartupNodes.length > 0 ? overrideStartupNodes : this.startup, { ...this.options, ...overrideOptions }));
    copy.onDuplicate = this.onDuplicate;
    this.onDuplicate(copy);
    return copy;
  }
}

function track<C extends FleetClient>(redis: C): C {
  redis.on('ready', () => (redis.readyAt = performance.now()));
  redis.on('error', () => undefined); // ioredis reconnects by itself; commands meanwhile wait (or fail at close)
  return redis;
}

/** How long a connection may take to quit politely before it is disconnected. */
const QUIT_MS = 1000;

/** How long the first connection to Redis may take before a fleet object gives up (`connectTimeoutMs`). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

/** One try at reaching Redis: settles when a connection is ready, or rejects at its timer. */
interface Reach {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Every connection one fleet object (an agent's `remoteTools`, a worker) opens, from its connection
 * option: from a given ioredis instance's options (the instance itself is never used, so never closed by
 * us), or from connection options. Commands wait for Redis while it is away (`maxRetriesPerRequest:
 * null`, as BullMQ needs) rather than fail: their callers are bounded by the calls' deadlines and by
 * `close()`, which can end them all ({@link disconnectAll}); on a Redis Cluster, so do commands whose
 * node is away (`maxRedirections: Infinity`). That holds once Redis was reached: a
 * Redis that none of them reached within `connectTimeoutMs` of the first open is taken for a wrong
 * address or a server not started, and {@link reachable} rejects (`redis_unreachable`, naming the
 * address) after every connection was ended — no retry loop is left behind, and nothing queued
 * meanwhile is ever sent. The next `open()` tries again.
 */
export class FleetConnections {
  readonly #open = new Set<FleetClient>();
  /** Whether a connection of this object was ever ready. */
  #reached = false;
  /** Settles when one is ready, or rejects `connectTimeoutMs` after the first open of this try. */
  #reach: Reach | undefined = undefined;
  /** The last connection error ioredis reported (e.g. `connect ECONNREFUSED 127.0.0.1:6379`), for the message. */
  #lastError: string | undefined = undefined;

  constructor(
    private readonly connection: ConnectionOptions,
    private readonly connectTimeoutMs: number = DEFAULT_CONNECT_TIMEOUT_MS,
  ) {}

  /** Where the connections go, for messages: see {@link redisAddress}. */
  get address(): string {
    return redisAddress(this.connection);
  }

  /** Where the connections go, for sentences: `Redis 127.0.0.1:6379`, or `the Redis Cluster 127.0.0.1:7000, …` (its startup nodes). */
  get named(): string {
    return clusterOf(this.connection) === undefined ? `Redis ${this.address}` : `the Redis Cluster ${this.address}`;
  }

  /**
   * A new connection (given to BullMQ too: the duplicates it makes of it are ours as well): to the
   * given `Cluster`'s startup nodes with its options when it is one — never a plain client, which
   * would go to localhost:6379 — else to the given Redis.
   */
  open(): FleetClient {
    const cluster = clusterOf(this.connection);
    let redis: FleetClient;
    if (cluster !== undefined) {
      // As for one Redis, a command waits while its node is away (a master restarting, a failover)
      // rather than fail: ioredis retries it every 100 ms or so (`retryDelayOnFailover`,
      // `retryDelayOnClusterDown`) but gives up after `maxRedirections` tries (16: about a second).
      const { redisOptions, ...options } = cluster.options;
      redis = track(new FleetCluster(startupNodesOf(cluster), { ...options, maxRedirections: Infinity, redisOptions: { ...redisOptions, maxRetriesPerRequest: null } }));
    } else {
      const { url, ...options } = redisOptionsOf(this.connection);
      const settings: RedisOptions = { ...options, maxRetriesPerRequest: null };
      redis = track(typeof url === 'string' ? new FleetRedis(url, settings) : new FleetRedis(settings));
    }
    this.#adopt(redis);
    redis.onDuplicate = (copy) => this.#adopt(copy);
    return redis;
  }

  /**
   * Resolves once a connection of this object has been ready (at once ever after); rejects with a
   * `redis_unreachable` {@link RemoteToolError} when none was within `connectTimeoutMs` of the first
   * `open()` — every connection is ended by then.
   */
  reachable(): Promise<void> {
    if (this.#reached) return Promise.resolve();
    return this.#startReach().promise;
  }

  /** Ends every connection at once, whatever it waits for: what was sent and not answered fails. */
  disconnectAll(): void {
    for (const redis of this.#open) redis.disconnect();
    this.#open.clear();
  }

  #adopt(redis: FleetClient): void {
    this.#open.add(redis);
    redis.once('end', () => this.#open.delete(redis));
    if (this.#reached) return;
    this.#startReach();
    redis.once('ready', () => this.#ready());
    redis.on('error', (error: Error & { lastNodeError?: Error }) => (this.#lastError = error.lastNodeError === undefined ? error.message : `${error.message} ${error.lastNodeError.message}`));
  }

  #startReach(): Reach {
    if (this.#reach !== undefined) return this.#reach;
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    promise.catch(() => undefined); // rejected with no one waiting: nothing to report (the next open tries again)
    const timer = setTimeout(() => {
      this.#reach = undefined;
      const why = this.#lastError === undefined ? 'no answer' : this.#lastError;
      reject(
        new RemoteToolError(
          'redis_unreachable',
          clusterOf(this.connection) === undefined
            ? `Redis at ${this.address} is unreachable: no connection within ${this.connectTimeoutMs} ms (${why}). Start one (\`redis-server\`) or point the connection option at yours (e.g. { url: process.env.REDIS_URL }).`
            : `The Redis Cluster at ${this.address} (its startup nodes) is unreachable: no connection within ${this.connectTimeoutMs} ms (${why}). Check that the cluster is up (\`redis-cli -c -h <host> -p <port> cluster info\` says cluster_state:ok) and that the Cluster's startup nodes are its addresses.`,
          '',
          { address: this.address },
        ),
      );
      this.disconnectAll(); // no retry loop left; commands queued meanwhile fail and are never sent
    }, this.connectTimeoutMs);
    timer.unref(); // the connections keep the process alive while they try; this timer alone does not
    this.#reach = { promise, resolve, timer };
    return this.#reach;
  }

  #ready(): void {
    if (this.#reached) return;
    this.#reached = true;
    const reach = this.#reach;
    this.#reach = undefined;
    if (reach === undefined) return;
    clearTimeout(reach.timer);
    reach.resolve();
  }
}

/**
 * The Redis a connection option points at, for messages: `host:port`, a socket path, or the URL
 * without its user and password; for a `Cluster`, its startup nodes, comma-separated.
 */
export function redisAddress(connection: ConnectionOptions): string {
  const cluster = clusterOf(connection);
  if (cluster !== undefined) return startupNodesOf(cluster).map(nodeAddress).join(', ');
  const options = redisOptionsOf(connection);
  if (typeof options.url === 'string') {
    try {
      const url = new URL(options.url);
      url.username = '';
      url.password = '';
      return url.toString().replace(/\/$/, '');
    } catch {
      return '(a malformed url)';
    }
  }
  if (typeof options.path === 'string') return options.path;
  return `${options.host ?? 'localhost'}:${options.port ?? 6379}`;
}

/** A cluster's startup node as ioredis reads it (a port alone, `host:port`, a URL, or `{ host, port }`), for messages. */
function nodeAddress(node: ClusterNode): string {
  if (typeof node === 'number') return `127.0.0.1:${node}`;
  if (typeof node === 'string') return /^rediss?:\/\//.test(node) ? redisAddress({ url: node }) : node;
  return `${node.host ?? '127.0.0.1'}:${node.port ?? 6379}`;
}

/**
 * Closes a connection we opened, within about a second whatever Redis does: `QUIT` when it is
 * connected (what it sent before is answered first), else — Redis away, or no answer in time (a
 * connection cut off) — a disconnect, which fails whatever still waits on it.
 */
export async function closeRedis(redis: RedisClient): Promise<void> {
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
