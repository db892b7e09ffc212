import { Redis, type Cluster, type ClusterNode, type RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';
import { ConfigError } from '../util/errors.js';
import { isObject } from '../util/validate.js';

/** BullMQ's key prefix when none is given: every key and channel of a fleet starts with it. */
export const DEFAULT_PREFIX = 'toolstream';

type Where = 'remoteTools' | 'createToolWorker' | 'setFleetLimits';

/** Throws the `ConfigError` of `where` for `option`. */
export function failer(where: Where): (option: string, expected: string, received: unknown) => never {
  return (option, expected, received) => {
    throw new ConfigError(where, option, expected, received);
  };
}

const CONNECTION = 'ioredis options (e.g. { host, port } or { url }), an ioredis Redis, or an ioredis Cluster';

/**
 * Checks the options every side shares: the connection, a queue name, the prefix. A client is an
 * ioredis `Redis` or `Cluster` (told apart by shape, so a client of another copy of ioredis is one too);
 * any other client object (node-redis, a Cluster without its startup nodes) is refused rather than
 * read as options — which would connect to localhost:6379.
 */
export function checkConnection(where: Where, connection: unknown): ConnectionOptions {
  if (connection instanceof Redis || clusterOf(connection as ConnectionOptions) !== undefined) return connection as ConnectionOptions;
  if (!isObject(connection)) failer(where)('connection', CONNECTION, connection);
  const client = connection as { duplicate?: unknown; connect?: unknown; options?: unknown; isCluster?: unknown; defineCommand?: unknown };
  if (typeof client.duplicate === 'function' || typeof client.connect === 'function') {
    const ioredis = typeof client.defineCommand === 'function' && isObject(client.options);
    if (!ioredis || client.isCluster === true) failer(where)('connection', `${CONNECTION} (this client is none of them)`, '(a client)');
  }
  return connection as ConnectionOptions;
}

/** The connection as an ioredis `Cluster`, when it is one (by shape: `isCluster`, its options and startup nodes). */
export function clusterOf(connection: ConnectionOptions): Cluster | undefined {
  const client = connection as { isCluster?: unknown; duplicate?: unknown; options?: unknown; startupNodes?: unknown };
  const is = client.isCluster === true && typeof client.duplicate === 'function' && isObject(client.options) && Array.isArray(client.startupNodes);
  return is ? (connection as unknown as Cluster) : undefined;
}

/** The options of a connection to one Redis: an ioredis `Redis`'s own (by shape, whichever copy of ioredis made it), or the options given. */
export function redisOptionsOf(connection: ConnectionOptions): RedisOptions & { readonly url?: unknown } {
  const client = connection as { duplicate?: unknown; options?: unknown };
  return (typeof client.duplicate === 'function' && isObject(client.options) ? client.options : connection) as RedisOptions;
}

/** A `Cluster`'s startup nodes (ioredis keeps them in a field its types call private): what each connection of ours is opened to. */
export function startupNodesOf(cluster: Cluster): ClusterNode[] {
  return [...(cluster as unknown as { startupNodes: ClusterNode[] }).startupNodes];
}

/**
 * The hash tag Redis Cluster hashes a key by: between its first `{` and the first `}` after it, when
 * not empty; undefined when the key has none (then the whole key is hashed).
 */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/**
 * On a Redis Cluster, every key of a queue — BullMQ's (`<prefix>:<queue>:…`) and toolstream's
 * (`<prefix>:<queue>:toolstream:…`) — must hash to one slot, as their scripts and multi-key commands
 * use several at once: the hash tag must be in `<prefix>:<queue>:`. Refused at creation otherwise
 * (Redis would refuse each call's first script with CROSSSLOT). The default prefix has none, and on a
 * single Redis needs none: it is not changed silently for a Cluster — agents and workers must agree on
 * it, so it is said once, by hand: `prefix: '{toolstream}'` (every queue in one slot), or a tag per
 * queue (`queue: '{browsers}'`) to spread queues over the cluster's masters.
 */
export function checkSlots(where: Where, connection: ConnectionOptions, prefix: string, queues: readonly string[]): void {
  if (clusterOf(connection) === undefined) return;
  const untagged = queues.find((queue) => hashTag(`${prefix}:${queue}:`) === undefined);
  if (untagged === undefined) return;
  failer(where)(
    'prefix',
    `on a Redis Cluster, a prefix with a hash tag, e.g. prefix: '{${prefix.replace(/[{}]/g, '')}}' (the same for agents and workers), or a queue name with one (queue: '{${untagged.replace(/[{}]/g, '')}}'), so that every key of a queue is in one slot — "${prefix}" with queue "${untagged}" has none`,
    prefix,
  );
}

const NAME = /^[^:\s]{1,200}$/;

export function checkName(where: Where, option: string, value: unknown): string {
  if (typeof value !== 'string' || !NAME.test(value)) failer(where)(option, 'a name of 1-200 characters without ":" or spaces', value);
  return value as string;
}

/** The shared secret that signs jobs: at least 32 bytes, as for approval tokens. */
export function checkSecret(where: Where, secret: unknown): Buffer {
  const bytes = typeof secret === 'string' ? Buffer.byteLength(secret) : secret instanceof Uint8Array ? secret.byteLength : -1;
  if (bytes < 32) {
    failer(where)(
      'secret',
      'a string or Uint8Array of at least 32 bytes, the same for the agents and the workers (it signs every job; keep it secret) — make one with `openssl rand -hex 32` and pass it to both, e.g. from an environment variable',
      secret === undefined ? undefined : '(too short)',
    );
  }
  return Buffer.from(secret as string | Uint8Array);
}
