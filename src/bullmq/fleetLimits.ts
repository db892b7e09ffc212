import { Queue, type ConnectionOptions } from 'bullmq';
import { isCount, isObject, isPositiveDuration } from '../util/validate.js';
import { checkConnection, checkName, checkSlots, DEFAULT_PREFIX, failer } from './fleetOptions.js';
import { boundedClose, DEFAULT_CONNECT_TIMEOUT_MS, FleetConnections } from './fleetRedis.js';

/** Options of {@link setFleetLimits}. */
export interface FleetLimitsOptions {
  /** As `remoteTools`'s: ioredis options, a `Redis`, or a `Cluster` (copied, never closed by us). */
  readonly connection: ConnectionOptions;
  /** The queue of the limited resource (one queue per resource: `remoteTools`'s `queue` function). */
  readonly queue: string;
  /** The fleet's prefix (with a hash tag on a Redis Cluster, e.g. `'{toolstream}'`). @default 'toolstream' */
  readonly prefix?: string;
  /** At most this many bodies of the queue run at once, over every worker; `null` removes the limit; unset leaves it. */
  readonly concurrency?: number | null;
  /** At most `max` jobs of the queue start per `perMs`, over every worker; `null` removes it; unset leaves it. */
  readonly rateLimit?: { readonly max: number; readonly perMs: number } | null;
  /**
   * How long the connection to Redis may take: none up by then and it rejects with a `RemoteToolError`
   * `redis_unreachable` naming the address, leaving no connection behind. @default 5000
   */
  readonly connectTimeoutMs?: number;
}

/**
 * Sets (or removes) a queue's fleet-wide limits, stored in Redis and honoured by every worker of the
 * queue at once (BullMQ's global concurrency and global rate limit). A call waits in the queue, holding
 * its agent's pool slot, until the limit lets it start — so its `timeoutMs` counts that wait too.
 *
 * @throws {ConfigError} (`where: 'setFleetLimits'`) for a malformed option.
 * @throws {RemoteToolError} `redis_unreachable` (rejects) when Redis is not reached within `connectTimeoutMs`.
 *
 * @example
 * ```ts
 * import { setFleetLimits } from 'toolstream/bullmq';
 *
 * // At most 50 browsers in the whole fleet, and the search API's 10 requests a second.
 * await setFleetLimits({ connection, queue: 'browsers', concurrency: 50 });
 * await setFleetLimits({ connection, queue: 'search-api', rateLimit: { max: 10, perMs: 1000 } });
 * ```
 */
export async function setFleetLimits(options: FleetLimitsOptions): Promise<void> {
  const fail = failer('setFleetLimits');
  if (!isObject(options)) fail('options', 'an object', options);
  const { concurrency, rateLimit, prefix = DEFAULT_PREFIX, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS } = options;
  const connection = checkConnection('setFleetLimits', options.connection);
  const name = checkName('setFleetLimits', 'queue', options.queue);
  checkName('setFleetLimits', 'prefix', prefix);
  checkSlots('setFleetLimits', connection, prefix, [name]);
  if (concurrency !== undefined && concurrency !== null && !isCount(concurrency, 1)) fail('concurrency', 'an integer of at least 1, or null to remove the limit', concurrency);
  if (rateLimit !== undefined && rateLimit !== null) {
    if (!isObject(rateLimit)) fail('rateLimit', '{ max, perMs }, or null to remove the limit', rateLimit);
    if (!isCount(rateLimit.max, 1)) fail('rateLimit.max', 'an integer of at least 1', rateLimit.max);
    if (!isPositiveDuration(rateLimit.perMs)) fail('rateLimit.perMs', 'a positive number of milliseconds', rateLimit.perMs);
  }
  if (!isPositiveDuration(connectTimeoutMs)) fail('connectTimeoutMs', 'a positive number of milliseconds', connectTimeoutMs);
  const connections = new FleetConnections(connection, connectTimeoutMs);
  const queue = new Queue(name, { connection: connections.open(), prefix });
  queue.on('error', () => undefined);
  try {
    await connections.reachable();
    if (concurrency === null) await queue.removeGlobalConcurrency();
    else if (concurrency !== undefined) await queue.setGlobalConcurrency(concurrency);
    if (rateLimit === null) await queue.removeGlobalRateLimit();
    else if (rateLimit !== undefined) await queue.setGlobalRateLimit(rateLimit.max, rateLimit.perMs);
  } finally {
    await boundedClose(queue.close(), 2000, connections); // the connection is ours: BullMQ leaves a given one open
  }
}
