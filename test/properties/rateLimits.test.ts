import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLimiter, createRateLimiter } from '../../src/index.js';
import { callSpecs, type CallSpec, clockedTimers, expectRunInvariants, GroupMonitor, monitoredTools, runMonitored } from '../support/monitor.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

type Spec = CallSpec;

describe('rate limits under random latencies, failures, modes, arrivals, limits and two pipelines sharing a RateLimiter', () => {
  it('never more than max starts in any perMs window; barriers kept; no deadlock; one result per call in order; no timer left', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        callSpecs,
        callSpecs,
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 20 }),
        fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
        fc.integer({ min: 1, max: 4 }),
        fc.subarray(['par', 'ex', 'slow'] as const, { minLength: 1 }),
        fc.constantFrom('cancel-rest' as const, 'continue' as const),
        async (s, specsA, specsB, max, perMs, limitMax, concurrency, limited, onError) => {
          const rateLimiter = createRateLimiter({ max, perMs });
          const limiter = limitMax === undefined ? undefined : createLimiter({ max: limitMax });
          const timers = clockedTimers(s); // one clock for both pipelines, as they share the rate limiter
          const group = new GroupMonitor(() => timers.now());
          const run = (tag: string, specs: readonly Spec[]) =>
            runMonitored(s, tag, specs, {
              tools: (monitor) => monitoredTools(s, monitor, { rateLimiter, ...(limiter ? { limiter } : {}), tools: limited, group }),
              scheduler: timers,
              concurrency,
              onError,
            });
          const a = run('a', specsA);
          const b = run('b', specsB);
          // No deadlock: both complete once the scheduler has run every task.
          await s.waitFor(Promise.all([a.done, b.done]));
          await s.waitAll();
          expectRunInvariants(a);
          expectRunInvariants(b);
          // Any `max + 1` consecutive starts of the rate-limited tools span at least perMs.
          const { starts } = group;
          for (let i = 0; i + max < starts.length; i++) expect(starts[i + max]! - starts[i]!).toBeGreaterThanOrEqual(perMs);
          if (limiter) expect(group.max).toBeLessThanOrEqual(limiter.max);
          expect(timers.active()).toBe(0);
          expect(rateLimiter.waiting()).toBe(0);
          expect(limiter?.active() ?? 0).toBe(0);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
