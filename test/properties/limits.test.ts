import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createLimiter, createPipeline, type ToolCall, type ToolResult } from '../../src/index.js';
import { BodyMonitor, callSpecs, feedCalls as feed, type CallSpec, GroupMonitor, monitoredTools, schedulerTimers } from '../support/monitor.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

type Spec = CallSpec;

describe('limits under random latencies, failures, modes, arrivals and two pipelines sharing a Limiter', () => {
  it('never more than max limited bodies at once; barriers kept; no deadlock; one result per call in order; nothing left held', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        callSpecs,
        callSpecs,
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.subarray(['par', 'ex', 'slow'] as const, { minLength: 1 }),
        fc.constantFrom('cancel-rest' as const, 'continue' as const),
        async (s, specsA, specsB, max, concurrency, limited, onError) => {
          const limiter = createLimiter({ max });
          const group = new GroupMonitor();
          const run = (tag: string, specs: readonly Spec[]) => {
            const monitor = new BodyMonitor();
            const timers = schedulerTimers(s);
            const pipeline = createPipeline({
              tools: monitoredTools(s, monitor, { limiter, tools: limited, group }),
              abortGraceMs: Infinity,
              defaultTimeoutMs: Infinity,
              scheduler: timers,
              concurrency,
              onError,
            });
            const calls = new Subject<ToolCall>();
            const results: ToolResult[] = [];
            const done = new Promise<void>((resolve, reject) =>
              calls.pipe(pipeline.operator()).subscribe({ next: (r) => results.push(r), error: reject, complete: resolve }),
            );
            void feed(s, tag, specs, calls);
            return { monitor, timers, results, done };
          };
          const a = run('a', specsA);
          const b = run('b', specsB);
          // No deadlock: both complete once the scheduler has run every task.
          await s.waitFor(Promise.all([a.done, b.done]));
          await s.waitAll();
          for (const [{ monitor, timers, results }, specs] of [[a, specsA], [b, specsB]] as const) {
            expect(results.map((r) => r.index)).toEqual(specs.map((_, i) => i));
            expect(monitor.violations).toEqual([]); // exclusive calls ran alone in their pipeline
            expect(monitor.maxRunning).toBeLessThanOrEqual(concurrency);
            expect(timers.active()).toBe(0);
          }
          expect(group.max).toBeLessThanOrEqual(max);
          expect(limiter.active()).toBe(0);
          expect(limiter.waiting()).toBe(0);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
