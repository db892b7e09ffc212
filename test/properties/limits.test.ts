import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/index.js';
import { callSpecs, type CallSpec, expectRunInvariants, GroupMonitor, monitoredTools, runMonitored, schedulerTimers } from '../support/monitor.js';

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
          const timers = schedulerTimers(s); // one scheduler for both pipelines, as they share the limiter
          const run = (tag: string, specs: readonly Spec[]) =>
            runMonitored(s, tag, specs, { tools: (monitor) => monitoredTools(s, monitor, { limiter, tools: limited, group }), scheduler: timers, concurrency, onError });
          const a = run('a', specsA);
          const b = run('b', specsB);
          // No deadlock: both complete once the scheduler has run every task.
          await s.waitFor(Promise.all([a.done, b.done]));
          await s.waitAll();
          expectRunInvariants(a);
          expectRunInvariants(b);
          expect(timers.active()).toBe(0);
          expect(group.max).toBeLessThanOrEqual(max);
          expect(limiter.active()).toBe(0);
          expect(limiter.waiting()).toBe(0);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
