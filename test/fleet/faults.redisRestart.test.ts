/**
 * Redis restarted (SIGKILLed and started again on its port) while remote bodies run — back within the
 * workers' `lockMs`, or after it (issue 24, finding 5: the locks of the bodies running expired meanwhile,
 * persisted or not; bodies that ended while Redis was away must keep their outcome) — two ways:
 * - **without persistence** (as the tests' and CI's Redis, and any Redis that loses its data): it comes
 *   back empty. The user sees: every call answered — those whose jobs were lost are `tool_error`s with
 *   `cause.code === 'job_lost'` ("The job is gone: the job is no longer in Redis") within a reconcile
 *   round of the reconnect; a body that was running finishes on its worker but its result has nowhere
 *   to go, and it never runs again.
 * - **with persistence** (`appendonly yes`, `appendfsync always`): it comes back with its jobs. The
 *   user sees the turn complete, every call `ok`, a little later than without the restart.
 *   Down longer than `lockMs`, the bodies that ended meanwhile keep their outcome all the same — none
 *   is `outcome_unknown`, none runs again (idempotent or not).
 * Either way: one result per call, in order; no body ran twice (the workers' side-effect logs); the
 * test stops by itself (a deadline, not the test timeout); the agent and both workers reconnect: a next
 * turn is served by both; and then every fleet object closes within seconds.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { remoteTools } from '../../src/bullmq/index.js';
import { createPipeline, type ToolResult } from '../../src/index.js';
import { redisAvailable, requireRedis, startRedis, type OwnRedis } from '../support/redis.js';
import { closesWithin, expectClosedThemselves, stopAfterEach } from './support/closing.js';
import { sleep, sleepIdempotent } from './support/contracts.js';
import { SECRET, testFleet, until, WITH_REDIS } from './support/fleet.js';

requireRedis();

const CALLS = 6;
/** Bodies run this long: Redis goes down while they do (and, down long, comes back after they ended). */
const BODY_MS = 600;
/** Back within the workers' lock (5 s by default), or well after a short one, its bodies ended meanwhile. */
const OUTAGES = [
  { downMs: 300, lockMs: undefined },
  { downMs: 2500, lockMs: 1000 },
] as const;
/** The turn must be answered by then, or the test fails (rather than hangs). */
const ANSWER_WITHIN_MS = 15_000;

const outline = (results: readonly ToolResult[]) => results.map((r) => `${r.id}:${r.status}${r.error === undefined ? '' : `/${r.error.code}/${(r.error as { cause?: { code?: string } }).cause?.code ?? ''}`}`);

describe.skipIf(!redisAvailable())(`Redis restarted mid-turn (${WITH_REDIS})`, () => {
  const made = stopAfterEach<OwnRedis>();

  const cases = OUTAGES.flatMap((outage) => [false, true].map((persist) => ({ ...outage, persist })));
  for (const { downMs, lockMs, persist } of cases) {
    it(`down ${downMs} ms (lockMs ${lockMs ?? 'default'}), ${persist ? 'with' : 'without'} persistence: every call answered (${persist ? 'ok' : 'ok or job_lost'}), none ran twice, no hang; a next turn works on both workers; all close`, async () => {
      const redis = (made.redis = await startRedis({ own: true, persist }));
      const f = (made.fleet = testFleet(redis.url));
      const queue = `q-${randomUUID()}`;
      await f.start(2, [{ queue, concurrency: 2 }], lockMs === undefined ? {} : { lockMs });
      const remote = (made.remote = remoteTools([sleep, sleepIdempotent], { connection: { url: redis.url }, queue, prefix: f.prefix, secret: SECRET, reconcileMs: 200 }));
      const pipeline = createPipeline({ tools: remote.tools, concurrency: CALLS });
      const starts = (prefix: string) => f.events().filter((event) => event.e === 'start' && event.callId.startsWith(prefix));

      // 4 bodies run (2 workers x 2), 2 jobs wait — idempotent or not, in turn; then Redis dies under them and comes back.
      const calls = Array.from({ length: CALLS }, (_, i) => ({ id: `before-${i}`, name: i % 2 === 0 ? 'sleep' : 'sleep_idempotent', args: { ms: BODY_MS } }));
      const run = pipeline.run(calls);
      await until(() => starts('before-').length === 4, 5000, 'four bodies to start');
      await redis.restart(downMs);
      const backAt = Date.now();
      let deadline: NodeJS.Timeout | undefined;
      const results = await Promise.race([
        run,
        new Promise<never>((_, reject) => (deadline = setTimeout(() => reject(new Error(`the turn was not answered within ${ANSWER_WITHIN_MS} ms of the restart`)), ANSWER_WITHIN_MS))),
      ]).finally(() => clearTimeout(deadline));
      console.log(`Redis restarted ${persist ? 'with' : 'without'} persistence mid-turn (down ${downMs} ms, lockMs ${lockMs ?? 5000}): answered ${Date.now() - backAt} ms after it was back: ${outline(results).join(' ')}`);

      expect(results.map((r) => r.id)).toEqual(calls.map((c) => c.id));
      for (const result of results) {
        if (persist) expect(result.status, outline(results).join(' ')).toBe('ok');
        else if (result.status !== 'ok') expect(result, outline(results).join(' ')).toMatchObject({ status: 'error', error: { code: 'tool_error', cause: { code: 'job_lost' } } });
      }
      if (!persist) expect(results.some((r) => r.status !== 'ok'), 'the jobs were lost with the data').toBe(true);
      // Let any body that could still start (a re-run, once a stall check moved its job) do so, then count: each at most once.
      await new Promise((resolve) => setTimeout(resolve, BODY_MS + 2 * (lockMs ?? 0) + 500));
      for (const call of calls) expect(starts(call.id).length, `${call.id} ran ${starts(call.id).length} times`).toBeLessThanOrEqual(1);
      expect(starts('before-').length).toBeGreaterThanOrEqual(4);

      // Everyone reconnected: a next turn of four overlapping bodies needs both workers (2 slots each).
      const next = await pipeline.run(Array.from({ length: 4 }, (_, i) => ({ id: `after-${i}`, name: 'sleep', args: { ms: 200 } })));
      expect(next.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
      expect(new Set(next.map((r) => (r.value as { pid: number }).pid)).size).toBe(2);

      const agentCloseMs = await closesWithin(() => remote.close(), 'remoteTools().close()');
      const exits = await f.stop();
      console.log(`closed after the restart: remoteTools ${agentCloseMs.toFixed(0)} ms; workers ${exits.map((exit) => `${exit.ms.toFixed(0)} ms`).join(', ')}`);
      expectClosedThemselves(exits);
    }, 60_000);
  }
});
