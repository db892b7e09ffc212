/**
 * DESIGN.md's invariants re-run with remote tools, on a real Redis and two real worker processes, in
 * real time (no `fc.scheduler`: it cannot order what other processes do). Each run is a small random
 * turn — 1–8 calls of a parallel remote tool, an exclusive remote tool and a local one, bodies of
 * 0–15 ms that may fail, deny/ask policies with random answers, a random pipeline `concurrency` and
 * `onError`, and maybe an abort of the run's signal after 0–20 ms. Checked on every run:
 * 1. one result per call, in input order;
 * 2. never more than `concurrency` bodies at once, and 3. an exclusive body overlaps no other —
 *    measured where the bodies ran (worker processes and the agent for the local tool) from start and
 *    end events on CLOCK_MONOTONIC, the one clock every process of the machine reads (nanoseconds,
 *    never stepped). No slack: a remote body's end is logged before its job completes in Redis, which
 *    is before the agent frees its slot, which is before the next job exists, which is before its body
 *    starts — a chain of causes, so an honest schedule shows end < start strictly;
 * 5. nothing not allowed is dispatched: a denied (or refused-approval) call has no job in the queue
 *    and no body start in any worker's log;
 * 6. after cancel-rest or the abort nothing is dispatched (agent-side start times), no call finishes
 *    ok, and every body that started of a call answered `cancelled` saw its signal abort — or ended
 *    before the cancel could have reached its worker (the agent answers `cancelled` at once; the
 *    worker hears it over Redis pub/sub, allowed `CANCEL_TRAVEL_MS`). Runs whose signal is aborted
 *    may hold 2-second bodies, so a cancel that never reached a worker would fail that bound;
 * and, without cancellations, each call's outcome is its body's (ok, or the worker's failure).
 * Between runs the fleet goes quiet (every started body ended, the queue empty), finished jobs are
 * removed and the logs emptied, and call ids are unique per run: nothing of one run reaches the next.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Queue, type JobType } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { remoteTools, type RemoteTools } from '../../src/bullmq/index.js';
import { createPipeline, defineTool, type OnError, type PrePolicy, type ToolResult } from '../../src/index.js';
import { redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';
import { stretched } from '../support/timing.js';
import { step, stepAlone } from './support/contracts.js';
import { monotonicMs, type WorkerEvent } from './support/fleetTools.js';
import { intervals, maxOverlap, SECRET, testFleet, WITH_REDIS, type TestFleet } from './support/fleet.js';

requireRedis();

/** At least 200 in CI (the bar); each run takes some 30–100 ms on 2 cores. */
const NUM_RUNS = Number(process.env['FLEET_PROPERTY_RUNS'] ?? 200);

const gate = fc.constantFrom('allow', 'allow', 'allow', 'deny', 'ask-yes', 'ask-no');
/** A body that would outlast any cancel's travel: only in runs whose signal is aborted (they end early). */
const LONG_MS = 2000;
/** How long a cancel may take to reach a worker on an idle machine (Redis pub/sub; the cancel test prints p50/p99), stretched on a busy one. */
const CANCEL_TRAVEL_MS = 250;
const callSpec = fc.record({
  tool: fc.constantFrom('step', 'step', 'step_alone', 'local'),
  ms: fc.oneof({ arbitrary: fc.nat({ max: 15 }), weight: 9 }, { arbitrary: fc.constant(LONG_MS), weight: 1 }),
  fail: fc.constantFrom(false, false, false, true),
  gate,
});
const runSpec = fc
  .record({
    calls: fc.array(callSpec, { minLength: 1, maxLength: 8 }),
    concurrency: fc.integer({ min: 1, max: 4 }),
    onError: fc.constantFrom<OnError | undefined>(undefined, 'continue', 'cancel-rest'),
    abortAfterMs: fc.option(fc.nat({ max: 20 }), { nil: undefined, freq: 2 }),
  })
  .map((run) => (run.abortAfterMs !== undefined ? run : { ...run, calls: run.calls.map((call) => ({ ...call, ms: Math.min(call.ms, 15) })) }));
type CallSpec = (typeof runSpec extends fc.Arbitrary<infer T> ? T : never)['calls'][number];

/** performance.now() + this = CLOCK_MONOTONIC (both are uv_hrtime in Node; measured within microseconds). */
const MONOTONIC_OFFSET = monotonicMs() - performance.now();

const ALL_STATES: JobType[] = ['completed', 'failed', 'waiting', 'active', 'delayed', 'prioritized', 'waiting-children'];

describe.skipIf(!redisAvailable())(`the invariants with remote tools (${WITH_REDIS})`, () => {
  let redis: TestRedis;
  let fleet: TestFleet;
  let remote: RemoteTools;
  let queue: Queue;
  const name = `q-${randomUUID()}`;
  /** The local tool's body events, logged like the workers' (same clock). */
  const local: WorkerEvent[] = [];
  const localTool = defineTool({
    name: 'local',
    description: 'Work a while, here',
    input: z.object({ ms: z.int().nonnegative(), fail: z.boolean() }),
    mode: 'parallel',
    execute: async ({ ms, fail }, ctx) => {
      const log = (e: WorkerEvent['e']) => local.push({ e, tool: 'local', callId: ctx.callId, pid: process.pid, t: 0, m: monotonicMs() });
      log('start');
      ctx.signal.addEventListener('abort', () => log('abort'), { once: true });
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          ctx.signal.addEventListener('abort', () => (clearTimeout(timer), reject(ctx.signal.reason)), { once: true });
        });
        if (fail) throw new Error('local failed as asked');
      } finally {
        log('end');
      }
      return 'local done';
    },
  });

  beforeAll(async () => {
    redis = await startRedis();
    fleet = testFleet(redis.url);
    // 2 × 4 slots: more than any run's concurrency, so the pipeline's limit is the one that binds.
    await fleet.start(2, [{ queue: name, concurrency: 4 }]);
    remote = remoteTools([step, stepAlone], { connection: { url: redis.url }, queue: name, prefix: fleet.prefix, secret: SECRET, reconcileMs: 200 });
    queue = new Queue(name, { connection: { url: redis.url }, prefix: fleet.prefix });
  });
  afterAll(async () => {
    await remote?.close();
    await queue?.close();
    await fleet?.stop();
    await redis?.stop();
  });

  /** Waits until every body of the run that started has ended and no job of the queue waits or runs. */
  async function quiet(prefix: string): Promise<WorkerEvent[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const events = [...fleet.events(), ...local].filter((event) => event.callId.startsWith(prefix)).sort((a, b) => a.m - b.m);
      const open = [...intervals(events).values()].filter((run) => run.end === Infinity).length;
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      if (open === 0 && Object.values(counts).every((n) => n === 0)) return events;
      if (Date.now() > deadline) throw new Error(`the fleet did not go quiet: ${open} bodies open, ${JSON.stringify(counts)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  let runNumber = 0;

  it(`1, 2, 3, 5, 6 over ${NUM_RUNS} random turns: order, the pool limit and barriers on the workers' clock, nothing denied dispatched, cancellation reaches the workers`, async () => {
    const seen = { cancelRest: 0, aborted: 0, denied: 0, remoteOk: 0, remoteFailed: 0, startedAfterCut: 0, endedBeforeCancelArrived: 0, longAborted: 0, maxOverlap: 0 };
    await fc.assert(
      fc.asyncProperty(runSpec, async ({ calls: specs, concurrency, onError, abortAfterMs }) => {
        const prefix = `r${runNumber++}-`;
        const ids = specs.map((_, i) => `${prefix}c${i}`);
        const specOf = new Map<string, CallSpec>(ids.map((id, i) => [id, specs[i]!]));
        const gates: PrePolicy = (ctx) => {
          const spec = specOf.get(ctx.call.id)!;
          if (spec.gate === 'deny') return { decision: 'deny', reason: 'the property denies it' };
          return spec.gate.startsWith('ask') ? { decision: 'ask' } : undefined;
        };
        const pipeline = createPipeline({
          tools: [...remote.tools, localTool],
          concurrency,
          ...(onError === undefined ? {} : { onError }),
          pre: [gates],
          approve: async ({ call }) => (specOf.get(call.id)!.gate === 'ask-yes' ? 'allowed-once' : 'rejected'),
        });
        const controller = new AbortController();
        let abortAt: number | undefined;
        let done = false;
        const timer =
          abortAfterMs === undefined
            ? undefined
            : setTimeout(() => {
                if (done) return;
                abortAt = performance.now(); // the pipeline's clock (result timings)
                controller.abort();
              }, abortAfterMs);
        const results: ToolResult[] = await pipeline.run(
          specs.map((spec, i) => ({ id: ids[i]!, name: spec.tool, args: { ms: spec.ms, fail: spec.fail } })),
          { signal: controller.signal },
        );
        done = true;
        clearTimeout(timer);
        const events = await quiet(prefix);
        const jobs = await queue.getJobs(ALL_STATES);
        const context = JSON.stringify({ specs, concurrency, onError, abortAfterMs, results: results.map((r) => [r.id, r.status, r.error?.code, r.started]) });

        // 1
        expect(results.map((r) => r.id), context).toEqual(ids);

        // 2, 3 — on the clock of the processes that ran the bodies
        const runs = intervals(events);
        const overlap = maxOverlap(events);
        seen.maxOverlap = Math.max(seen.maxOverlap, overlap);
        expect(overlap, context).toBeLessThanOrEqual(concurrency);
        for (const [id, run] of runs) {
          expect(events.filter((event) => event.callId === id && event.e === 'start'), `${id} started twice: ${context}`).toHaveLength(1);
          if (run.tool !== 'step_alone') continue;
          for (const [other, them] of runs) {
            if (other !== id) expect(them.end < run.start || them.start > run.end, `${other} overlaps the barrier ${id}: ${context}`).toBe(true);
          }
        }

        // 5 — no job, no body for what was not allowed
        const dispatched = new Set(jobs.map((job) => (job.data as { callId: string }).callId).filter((id) => id.startsWith(prefix)));
        for (const [i, spec] of specs.entries()) {
          const id = ids[i]!;
          if (spec.gate === 'deny' || spec.gate === 'ask-no') {
            seen.denied++;
            expect(results[i]!.status, context).toBe('denied');
            expect(runs.has(id), `${id} ran though denied: ${context}`).toBe(false);
            expect(dispatched.has(id), `${id} has a job though denied: ${context}`).toBe(false);
          } else {
            expect(results[i]!.status, context).not.toBe('denied');
          }
          if (spec.tool === 'local') expect(dispatched.has(id), context).toBe(false);
          // A job exists for a remote call exactly when its body was dispatched (a waiting one cancelled is removed).
          if (dispatched.has(id)) expect(results[i]!.started, context).toBe(true);
          if (runs.has(id)) expect(results[i]!.started, context).toBe(true);
        }

        // 6 — the moment the turn was cancelled (agent clock): the abort, or the failure that cancelled the rest
        const causes = results.flatMap((r) => (r.error?.code === 'cancelled' && r.error.reason === 'sibling_failed' ? [r.error.byCallId] : []));
        const failureEnds = causes.map((id) => results.find((r) => r.id === id)!.timing.endedAt!);
        const cut = Math.min(abortAt ?? Infinity, ...failureEnds);
        if (onError === 'continue') expect(causes, context).toEqual([]);
        if (causes.length > 0) seen.cancelRest++;
        if (abortAt !== undefined && results.some((r) => r.error?.code === 'cancelled' && r.error.reason === 'aborted')) seen.aborted++;
        for (const [i, result] of results.entries()) {
          const id = ids[i]!;
          if (result.started && result.timing.startedAt! > cut) expect.fail(`${id} was dispatched after the cancel: ${context}`);
          if (result.status === 'ok') expect(result.timing.endedAt!, `${id} ended ok after the cancel: ${context}`).toBeLessThanOrEqual(cut);
          if (result.status === 'cancelled') {
            expect(cut, context).toBeLessThan(Infinity);
            const run = runs.get(id);
            // Its body saw its signal abort — unless it ended before the cancel could reach its worker
            // (the agent answers at once; the worker hears it over Redis): then there was nothing to abort.
            if (run !== undefined && !events.some((event) => event.callId === id && event.e === 'abort')) {
              seen.endedBeforeCancelArrived++;
              expect(run.end - (cut + MONOTONIC_OFFSET), `${id} was cancelled while its body ran, which never saw its signal abort: ${context}`).toBeLessThan(stretched(CANCEL_TRAVEL_MS));
            }
          }
          if (!result.started) expect(runs.has(id), `${id} ran, never dispatched: ${context}`).toBe(false);
        }
        // Bodies whose job was dispatched before the cancel but that a worker began after it (counted, not
        // asserted: the agent's clock is performance.now(), CLOCK_MONOTONIC less a constant; checked above
        // that they saw their signal abort like every cancelled body that ran).
        for (const [id, run] of runs) {
          const cancelled = results.find((r) => r.id === id)!.status === 'cancelled';
          if (cancelled && run.start > cut + MONOTONIC_OFFSET) seen.startedAfterCut++;
          if (cancelled && specOf.get(id)!.ms === LONG_MS) seen.longAborted++;
        }

        // Without a cancellation each call's outcome is its body's.
        if (cut === Infinity) {
          for (const [i, spec] of specs.entries()) {
            if (spec.gate === 'deny' || spec.gate === 'ask-no') continue;
            const result = results[i]!;
            if (spec.fail) {
              expect(result, context).toMatchObject({ status: 'error', error: { code: 'tool_error' } });
              if (spec.tool !== 'local') expect(result.error!.message, context).toContain('failed as asked');
            } else {
              expect(result.status, context).toBe('ok');
            }
            if (spec.tool !== 'local') spec.fail ? seen.remoteFailed++ : seen.remoteOk++;
          }
        }

        // Nothing of this run reaches the next.
        await Promise.all([queue.clean(0, 10_000, 'completed'), queue.clean(0, 10_000, 'failed')]);
        fleet.clearEvents();
        local.length = 0;
      }),
      { numRuns: NUM_RUNS },
    );
    console.log(`fleet properties, ${NUM_RUNS} runs: ${JSON.stringify(seen)}`);
    // The runs did reach what they check.
    expect(seen.cancelRest).toBeGreaterThan(0);
    expect(seen.aborted).toBeGreaterThan(0);
    expect(seen.denied).toBeGreaterThan(0);
    expect(seen.remoteFailed).toBeGreaterThan(0);
    expect(seen.maxOverlap).toBeGreaterThan(1);
    expect(seen.longAborted).toBeGreaterThan(0); // a cancel that did not travel would have failed these
  }, 300_000);
});
