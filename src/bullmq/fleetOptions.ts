import { Redis } from 'ioredis';
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

/** Checks the options every side shares: the connection, a queue name, the prefix. */
export function checkConnection(where: Where, connection: unknown): ConnectionOptions {
  if (!(connection instanceof Redis) && !isObject(connection)) {
    failer(where)('connection', 'ioredis options (e.g. { host, port } or { url }) or an ioredis instance', connection);
  }
  return connection as ConnectionOptions;
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
