import { afterEach, expect } from 'vitest';
import type { RemoteTools } from '../../../src/bullmq/index.js';
import type { TestRedis } from '../../support/redis.js';
import { stretched } from '../../support/timing.js';
import type { TcpProxy } from '../../support/tcpProxy.js';
import type { ProcessExit, TestFleet } from './fleet.js';

/** How long a fleet object's `close()` may take in a fault test on an idle machine: "within seconds", whatever Redis did. */
export const CLOSE_WITHIN_MS = 5000;

/**
 * Resolves with how long `close` took once it returned; fails the test when it takes longer than
 * {@link CLOSE_WITHIN_MS} ({@link stretched} on a busy machine; it never hangs the test).
 */
export async function closesWithin(close: () => Promise<void>, what: string, idleMs = CLOSE_WITHIN_MS): Promise<number> {
  const ms = stretched(idleMs);
  const startedAt = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([close(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not return within ${ms.toFixed(0)} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
  return performance.now() - startedAt;
}

/** Every worker process closed its worker and exited by itself once told (none had to be killed). */
export function expectClosedThemselves(exits: readonly ProcessExit[]): void {
  for (const exit of exits) expect(exit, `worker ${exit.pid} closed by itself (it was killed after ${exit.ms.toFixed(0)} ms)`).toMatchObject({ closedItself: true });
}

/** What a fault test made: set it as it goes; whatever is set is closed and stopped after each test. */
export interface FaultTestParts<R extends TestRedis> {
  redis?: R | undefined;
  fleet?: TestFleet | undefined;
  remote?: RemoteTools | undefined;
  readonly proxies: TcpProxy[];
}

/**
 * Registers an `afterEach` that closes and stops what each test of the file made (the agent's tools,
 * the worker processes, the proxies, then Redis), so a failed test leaves no process or connection
 * behind either.
 */
export function stopAfterEach<R extends TestRedis = TestRedis>(): FaultTestParts<R> {
  const parts: FaultTestParts<R> = { proxies: [] };
  afterEach(async () => {
    await parts.remote?.close();
    await parts.fleet?.stop();
    await Promise.all(parts.proxies.map((proxy) => proxy.close()));
    await parts.redis?.stop();
    [parts.remote, parts.fleet, parts.redis] = [undefined, undefined, undefined];
    parts.proxies.length = 0;
  });
  return parts;
}
