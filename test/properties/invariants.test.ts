import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createPipeline, type PipelineOptions, type ToolCall, type ToolResult } from '../../src/index.js';
import { checkInvariants } from '../../src/testing/index.js';
import { admits, BodyMonitor, callSpecs, gateApprover, gatePolicy, monitoredTools, NEVER_MS, schedulerTimers } from '../support/monitor.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

type Spec = (typeof callSpecs extends fc.Arbitrary<infer T> ? T : never)[number];

/** Feeds the calls through a Subject, each arrival a scheduler task unless it is part of a burst; each is pushed to `sent` as fed. */
async function feed(s: fc.Scheduler, specs: readonly Spec[], calls: Subject<ToolCall>, sent: ToolCall[] = []): Promise<void> {
  for (const [i, spec] of specs.entries()) {
    if (!spec.burst) await s.schedule(Promise.resolve(), `arrival ${i}`);
    const args = { key: `k${i}`, steps: spec.steps, outcome: spec.outcome, gate: spec.gate };
    const call = { id: `c${i}`, name: spec.name, args: spec.argsAsJson ? JSON.stringify(args) : args };
    sent.push(call);
    calls.next(call);
  }
  await s.schedule(Promise.resolve(), 'source completes');
  calls.complete();
}

/** Runs the random batch to completion through a pipeline of monitored tools; returns what happened. */
async function runBatch(s: fc.Scheduler, specs: readonly Spec[], options: Omit<PipelineOptions, 'tools' | 'scheduler'>) {
  const monitor = new BodyMonitor();
  const timers = schedulerTimers(s);
  // Results' timing is read from the scheduler's clock, and property 6 orders the calls by it: a clock
  // that moves forward by a hair at each reading keeps the order things happened in, and is too slow
  // to bring any deadline due sooner (fast-check still decides when each timer fires).
  let now = 0;
  const ordered = { ...timers, now: () => (now += 1e-9) };
  const tools = monitoredTools(s, monitor);
  const pipeline = createPipeline({
    tools,
    abortGraceMs: Infinity, // slots are freed only by bodies settling: the invariants hold exactly
    // The specs model their own time limits (per tool); the pipeline's defaults would fire at random points.
    defaultTimeoutMs: Infinity,
    approvalTimeoutMs: Infinity,
    scheduler: ordered,
    ...options,
  });
  const source = new Subject<ToolCall>();
  const calls: ToolCall[] = [];
  const results: ToolResult[] = [];
  const done = new Promise<void>((resolve, reject) =>
    source.pipe(pipeline.operator()).subscribe({ next: (r) => results.push(r), error: reject, complete: resolve }),
  );
  void feed(s, specs, source, calls);
  await s.waitFor(done);
  await s.waitAll();
  const concurrency = options.concurrency ?? Infinity;
  // Invariants 1, 2, 3, 5 and 6 (no cancelled call started) by toolstream/testing, on the bodies' own log.
  const invariants = checkInvariants({ calls, results, log: monitor.log, tools, concurrency });
  return { monitor, timers, results, invariants };
}

describe('invariants (DESIGN.md) under random latencies, failures, modes and arrival times', () => {
  it('1, 2, 3, 6: one result per call in input order; ≤ concurrency bodies; exclusive alone; cancel-rest starts nothing and aborts what runs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        callSpecs,
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom('cancel-rest' as const, 'continue' as const),
        fc.constantFrom(1, 2, 5, Infinity),
        async (s, specs, concurrency, onError, maxPending) => {
          const { monitor, timers, results, invariants } = await runBatch(s, specs, { concurrency, onError, maxPending });

          // 1: exactly one result per call, in input order; 2 and 3: the bound and the barriers
          expect(results.length).toBe(specs.length);
          expect(invariants).toEqual({ ok: true });
          // no timer left behind
          expect(timers.active()).toBe(0);

          const failures = results.filter((r) => r.error?.code === 'tool_error' || r.error?.code === 'timeout');
          for (const [i, result] of results.entries()) {
            const key = `k${i}`;
            expect(result.started).toBe(monitor.started.has(key));
            if (result.status === 'cancelled') {
              expect(onError).toBe('cancel-rest');
              // 6: a cancelled call either never started, or saw its signal abort
              if (result.started) expect(monitor.signals.get(key)?.aborted).toBe(true);
            }
            if (result.error?.code === 'timeout') expect(monitor.signals.get(key)?.aborted).toBe(true);
          }
          if (onError === 'cancel-rest' && failures.length > 0) {
            // 6: the first failure decided ends the batch: nothing starts after it, nothing else ends ok after it
            const first = failures.reduce((a, b) => (a.timing.endedAt! <= b.timing.endedAt! ? a : b));
            for (const result of results) {
              if (result === first || result.status === 'cancelled') continue;
              if (result.started) expect(result.timing.startedAt!).toBeLessThanOrEqual(first.timing.endedAt!);
              if (result.status === 'ok') expect(result.timing.endedAt!).toBeLessThanOrEqual(first.timing.endedAt!);
            }
            expect(results.filter((r) => r.status === 'cancelled').every((r) => r.error?.code === 'cancelled')).toBe(true);
          }
          if (onError === 'continue') {
            for (const [i, spec] of specs.entries()) {
              const status = results[i]!.status;
              if (spec.outcome === 'throw' || spec.outcome === 'syncThrow') expect(status).toBe('error');
              else if (spec.name !== 'slow') expect(status).toBe('ok');
            }
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('6: after unsubscribe no body starts, every running body sees its signal abort, and no timer is left', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        callSpecs,
        fc.integer({ min: 1, max: 4 }),
        fc.nat({ max: 30 }),
        async (s, specs, concurrency, ticksBeforeUnsubscribe) => {
          const monitor = new BodyMonitor();
          const timers = schedulerTimers(s);
          // As in runBatch: the specs model their own time limits, and slots are freed only by bodies settling.
          const pipeline = createPipeline({
            tools: monitoredTools(s, monitor),
            concurrency,
            scheduler: timers,
            defaultTimeoutMs: Infinity,
            abortGraceMs: Infinity,
          });
          const calls = new Subject<ToolCall>();
          const results: ToolResult[] = [];
          const subscription = calls.pipe(pipeline.operator()).subscribe((r) => results.push(r));
          void feed(s, specs, calls);
          for (let i = 0; i < ticksBeforeUnsubscribe && s.count() > 0; i++) await s.waitOne();

          const runningAtUnsubscribe = [...monitor.running];
          subscription.unsubscribe();
          monitor.closed = true;
          for (const key of runningAtUnsubscribe) expect(monitor.signals.get(key)?.aborted).toBe(true);
          expect(timers.active()).toBe(0);
          const count = results.length;

          await s.waitAll();
          expect(monitor.violations).toEqual([]);
          expect(results.length).toBe(count); // nothing is emitted after unsubscribe
          expect(calls.observed).toBe(false); // the source was released
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('1, 2, 3, 5 with policies, approvals and start checks pending concurrently: order, bounds and barriers hold; only allowed or approved bodies that pass their start checks run', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), callSpecs, fc.integer({ min: 1, max: 4 }), async (s, specs, concurrency) => {
        const asked: string[] = [];
        const { monitor, results, invariants } = await runBatch(s, specs, {
          concurrency,
          onError: 'continue',
          policyTimeoutMs: NEVER_MS, // the policies here are slow, not stuck
          pre: [gatePolicy(s)],
          approve: gateApprover(s, asked),
        });

        expect(results.length).toBe(specs.length);
        expect(invariants).toEqual({ ok: true });
        for (const [i, spec] of specs.entries()) {
          const key = `k${i}`;
          const admitted = admits(spec.gate);
          expect(monitor.started.has(key)).toBe(admitted);
          if (!admitted) expect(results[i]!.status).toBe('denied');
        }
        expect(asked.sort()).toEqual(specs.flatMap((spec, i) => (spec.gate.startsWith('ask') ? [`k${i}`] : [])).sort());
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
