import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NEVER_MS, schedulerTimers } from './monitor.js';

describe('schedulerTimers (the property tests\' timers, fired when fast-check says)', () => {
  // The invariants tests' clock moves on by 1e-9 ms at each reading, so a pipeline that sets a deadline of
  // NEVER_MS (policyTimeoutMs) asks for a timer a hair shorter: it fired, and a slow policy failed closed
  // in a test that says policies there are slow, not stuck (seed -1258036712 of invariants.test.ts).
  it('never fires a timer of NEVER_MS, nor one a hair shorter; both stay counted until cancelled', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const timers = schedulerTimers(s);
        const fired: number[] = [];
        const never = [NEVER_MS, NEVER_MS - 1e-6].map((delay) => timers.schedule(() => void fired.push(delay), delay));
        timers.schedule(() => void fired.push(5), 5);
        await s.waitAll();
        expect(fired).toEqual([5]);
        expect(timers.active()).toBe(2);
        for (const timer of never) timer.unsubscribe();
        expect(timers.active()).toBe(0);
      }),
      { numRuns: 20 },
    );
  });
});
