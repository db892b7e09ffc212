import fc from 'fast-check';
import type { PrePolicy } from '../../src/index.js';

/** A tool of a random durable turn: how it runs, whether it may run again, what the policy says of it, how many ticks its body takes. */
export interface GatedToolSpec {
  readonly mode: 'parallel' | 'exclusive';
  readonly idempotent: boolean;
  readonly gate: 'allow' | 'deny' | 'ask';
  readonly steps: number;
}

export const gatedToolSpec = (maxSteps: number): fc.Arbitrary<GatedToolSpec> =>
  fc.record({
    mode: fc.constantFrom('parallel', 'exclusive'),
    idempotent: fc.boolean(),
    gate: fc.constantFrom('allow', 'allow', 'deny', 'ask'),
    steps: fc.nat({ max: maxSteps }),
  });

/** The policy of tools `t0`, `t1`, …: each one's gate; `deniedToday` tightens a resume. Other tools are left to the default. */
export const gates = (specs: readonly GatedToolSpec[], deniedToday: ReadonlySet<number>): PrePolicy =>
  function gates(ctx) {
    const i = Number(ctx.call.name.slice(1));
    const spec = specs[i];
    if (spec === undefined) return undefined;
    if (deniedToday.has(i)) return { decision: 'deny', reason: 'denied today' };
    return spec.gate === 'allow' ? undefined : { decision: spec.gate };
  };
