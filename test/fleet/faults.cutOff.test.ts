/**
 * Issue 24, finding 4: a worker cut off from Redis mid-body (a TCP proxy in front of it turns into a
 * blackhole: its sockets stay open, nothing answers, no error), on a queue limited to one body at a time
 * over the fleet. Its job's lock lapses; the other worker's stall check hands the job on. The user sees
 * the call answered as for a worker that died — an idempotent one runs again and is `ok`, any other is
 * `outcome_unknown` and never runs twice — and the bodies' own logs show the cut-off body stopped (its
 * signal aborted once its lock could have lapsed) before its successor started: never two at once on a
 * queue limited to one. Every fleet object closes within seconds, the cut-off worker too.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { remoteTools, setFleetLimits } from '../../src/bullmq/index.js';
import { createPipeline, type ToolResult } from '../../src/index.js';
import { redisAvailable, requireRedis, startRedis } from '../support/redis.js';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.js';
import { closesWithin, expectClosedThemselves, stopAfterEach } from './support/closing.js';
import { sleep, sleepIdempotent } from './support/contracts.js';
import { maxOverlap, SECRET, testFleet, until, WITH_REDIS } from './support/fleet.js';
import { monotonicMs } from './support/fleetTools.js';

requireRedis();

const LOCK_MS = 1000;
/** Long enough that an unstopped cut-off body would still run when its successor starts (about 2 × LOCK_MS later). */
const BODY_MS = 3000;

describe.skipIf(!redisAvailable())(`a worker cut off from Redis mid-body (${WITH_REDIS})`, () => {
  const made = stopAfterEach();

  /**
   * Two workers, each behind a proxy of its own, on a queue limited to one body; `tool` called once; the
   * proxy of the worker that started it becomes a blackhole. Then everything is closed (the proxy still a
   * blackhole): the agent's `close()` and each worker's, timed.
   */
  async function cutOffMidBody(tool: 'sleep' | 'sleep_idempotent') {
    const redis = (made.redis = await startRedis());
    const f = (made.fleet = testFleet(redis.url));
    const queue = `q-${randomUUID()}`;
    await setFleetLimits({ connection: { url: redis.url }, queue, prefix: f.prefix, concurrency: 1 });
    const proxies = [await startTcpProxy(redis.url), await startTcpProxy(redis.url)];
    made.proxies.push(...proxies);
    // Which proxy each worker connects through (they get ready in any order).
    const proxyOf = new Map<number | undefined, TcpProxy>();
    await Promise.all(proxies.map(async (proxy) => proxyOf.set((await f.start(1, [{ queue, concurrency: 2 }], { lockMs: LOCK_MS, url: proxy.url }))[0]!.pid, proxy)));
    const agent = (made.remote = remoteTools([sleep, sleepIdempotent], { connection: { url: redis.url }, queue, prefix: f.prefix, secret: SECRET, reconcileMs: 200 }));
    const id = `call-${randomUUID()}`;
    const run = createPipeline({ tools: agent.tools }).run([{ id, name: tool, args: { ms: BODY_MS } }]);
    const starts = () => f.events().filter((event) => event.callId === id && event.e === 'start');
    await until(() => starts().length === 1, 5000, 'the body to start');
    const cutOff = starts()[0]!.pid;
    proxyOf.get(cutOff)!.blackhole();
    let answeredAt = Infinity;
    const [result] = (await run.then((results) => ((answeredAt = monotonicMs()), results))) as [ToolResult];
    await new Promise((resolve) => setTimeout(resolve, 300)); // a body that could still start (a second run) would by now
    const events = f.events().filter((event) => event.callId === id);
    const agentCloseMs = await closesWithin(() => agent.close(), 'remoteTools().close()');
    const exits = await f.stop();
    console.log(`closed with a worker cut off: remoteTools ${agentCloseMs.toFixed(0)} ms; workers ${exits.map((exit) => `${exit.pid === cutOff ? 'cut off' : 'other'} ${exit.ms.toFixed(0)} ms`).join(', ')}`);
    return { result, cutOff, events, answeredAt, exits };
  }

  it('an idempotent call runs again on the other worker, and the cut-off body stopped before that one started', async () => {
    const { result, cutOff, events, exits } = await cutOffMidBody('sleep_idempotent');
    const [first, second] = events.filter((event) => event.e === 'start');
    const stopped = events.find((event) => event.e === 'end' && event.pid === cutOff);
    console.log(`cut-off body stopped ${(stopped!.m - first!.m).toFixed(0)} ms after it started; its successor started ${(second!.m - stopped!.m).toFixed(0)} ms after that (lockMs ${LOCK_MS}); most bodies at once: ${maxOverlap(events)}`);
    expect(result).toMatchObject({ status: 'ok' });
    expect(second, 'the job ran again').toBeDefined();
    expect(first!.pid).toBe(cutOff);
    expect(second!.pid).not.toBe(cutOff);
    expect(events.some((event) => event.e === 'abort' && event.pid === cutOff), 'the cut-off body\'s signal aborted').toBe(true);
    expect(stopped!.m).toBeLessThan(second!.m);
    expect(maxOverlap(events)).toBe(1);
    expectClosedThemselves(exits);
  });

  it('any other call is outcome_unknown, never runs twice, and the cut-off body stopped before the call was answered', async () => {
    const { result, cutOff, events, answeredAt, exits } = await cutOffMidBody('sleep');
    expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown' } });
    expect(events.filter((event) => event.e === 'start')).toHaveLength(1);
    expect(events.some((event) => event.e === 'abort' && event.pid === cutOff), 'the cut-off body\'s signal aborted').toBe(true);
    const stopped = events.find((event) => event.e === 'end' && event.pid === cutOff);
    expect(stopped, 'the cut-off body ended').toBeDefined();
    console.log(`cut-off body stopped ${(answeredAt - stopped!.m).toFixed(0)} ms before the call was answered outcome_unknown (lockMs ${LOCK_MS})`);
    expect(stopped!.m).toBeLessThan(answeredAt);
    expectClosedThemselves(exits);
  });
});
