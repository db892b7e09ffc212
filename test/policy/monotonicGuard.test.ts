import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GuardRelaxedError, MonotonicGuard, stricter, type Decision } from '../../src/index.js';

const LEVEL: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

describe('MonotonicGuard', () => {
  it('accepts the first update as it is', () => {
    const guard = new MonotonicGuard();
    expect(guard.decision).toBeUndefined();
    expect(guard.update('allow')).toBeUndefined();
    expect(guard.decision).toBe('allow');
  });

  it('tightens: allow → ask → deny', () => {
    const guard = new MonotonicGuard();
    for (const d of ['allow', 'ask', 'deny'] as const) expect(guard.update(d)).toBeUndefined();
    expect(guard.decision).toBe('deny');
  });

  it('returns (does not throw) a GuardRelaxedError on a relaxing update and keeps the stricter decision', () => {
    const guard = new MonotonicGuard();
    guard.update('deny');
    const refused = guard.update('allow');
    expect(refused).toBeInstanceOf(GuardRelaxedError);
    expect(refused).toMatchObject({ code: 'guard_relaxed', from: 'deny', to: 'allow' });
    expect(refused!.message).toBe('a decision may only tighten: deny → allow refused');
    expect(guard.decision).toBe('deny');
  });

  it('an equal update is accepted', () => {
    const guard = new MonotonicGuard();
    guard.update('ask');
    expect(guard.update('ask')).toBeUndefined();
  });

  it('for any sequence the decision is the strictest seen, and refusals are exactly the relaxing steps', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom<Decision>('allow', 'ask', 'deny'), { minLength: 1 }), (sequence) => {
        const guard = new MonotonicGuard();
        let refusals = 0;
        let strictest = -1;
        for (const d of sequence) {
          const refused = guard.update(d);
          if (refused) refusals++;
          expect(refused !== undefined).toBe(LEVEL[d] < strictest);
          strictest = Math.max(strictest, LEVEL[d]);
          expect(LEVEL[guard.decision!]).toBe(strictest);
        }
        expect(refusals).toBe(sequence.filter((d, i) => LEVEL[d] < Math.max(...sequence.slice(0, i).map((x) => LEVEL[x]), -1)).length);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 1000) },
    );
  });

  it('stricter picks the stricter of two', () => {
    expect(stricter('allow', 'ask')).toBe('ask');
    expect(stricter('deny', 'ask')).toBe('deny');
    expect(stricter('allow', 'allow')).toBe('allow');
  });
});
