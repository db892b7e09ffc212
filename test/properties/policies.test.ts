import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type Decision, type PrePolicy, type ToolCall } from '../../src/index.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);
const LEVEL: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };
const decisions = fc.constantFrom<Decision>('allow', 'ask', 'deny');

/** What policy i does for one call. */
type Behaviour =
  | { kind: 'pass' }
  | { kind: 'decide'; decision: Decision }
  | { kind: 'delegateThenDecide'; decision: Decision }
  | { kind: 'delegateThenPass' }
  | { kind: 'throw' }
  | { kind: 'garbage' }
  | { kind: 'delegateThenThrow' }
  | { kind: 'nextTwice' }
  | { kind: 'rewrite' }
  | { kind: 'badRewrite' };

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'pass' as const }) },
  { weight: 3, arbitrary: decisions.map((decision) => ({ kind: 'decide' as const, decision })) },
  { weight: 4, arbitrary: decisions.map((decision) => ({ kind: 'delegateThenDecide' as const, decision })) },
  { weight: 2, arbitrary: fc.constant({ kind: 'delegateThenPass' as const }) },
  { weight: 1, arbitrary: fc.constantFrom<Behaviour>({ kind: 'throw' }, { kind: 'garbage' }, { kind: 'delegateThenThrow' }, { kind: 'nextTwice' }) },
  { weight: 1, arbitrary: fc.constantFrom<Behaviour>({ kind: 'rewrite' }, { kind: 'badRewrite' }) },
);

type Expected = { failed: false; decisions: Decision[]; rewrites: number; badRewrite: false } | { failed: true; badRewrite: boolean };

/**
 * The reference model: walk the chain as the spec says and collect the decisions in unwind order.
 * Folding them monotonically (first accepted, then only tighter) ends at their maximum.
 */
function reference(plan: readonly Behaviour[], defaultDecision: Decision): Expected {
  const decided: Decision[] = [];
  let rewrites = 0;
  let failure: { badRewrite: boolean } | undefined;
  const walk = (i: number): void => {
    if (failure) return;
    if (i === plan.length) return void decided.push(defaultDecision);
    const b = plan[i]!;
    switch (b.kind) {
      case 'pass':
      case 'delegateThenPass':
        return walk(i + 1);
      case 'decide':
        return void decided.push(b.decision);
      case 'delegateThenDecide':
        walk(i + 1);
        if (!failure) decided.push(b.decision);
        return;
      case 'throw':
      case 'garbage':
        failure ??= { badRewrite: false };
        return;
      case 'delegateThenThrow':
      case 'nextTwice':
        walk(i + 1);
        failure ??= { badRewrite: false };
        return;
      case 'rewrite':
        rewrites++;
        return walk(i + 1);
      case 'badRewrite':
        failure ??= { badRewrite: true };
        return;
    }
  };
  walk(0);
  return failure ? { failed: true, ...failure } : { failed: false, decisions: decided, rewrites, badRewrite: false };
}

const input = z.object({ j: z.number(), n: z.number(), plan: z.array(z.any()) });

/** Policy i reads its behaviour for this call from the call's own plan. */
const policyAt = (i: number): PrePolicy =>
  Object.defineProperty(
    async (ctx, next) => {
      const args = ctx.args as z.output<typeof input>;
      const b = args.plan[i] as Behaviour;
      if (Math.random() < 0.5) await Promise.resolve(); // sync and async policies alike
      switch (b.kind) {
        case 'pass':
          return undefined;
        case 'decide':
          return { decision: b.decision, reason: `p${i}` };
        case 'delegateThenDecide':
          await next();
          return { decision: b.decision, reason: `p${i}` };
        case 'delegateThenPass':
          await next();
          return undefined;
        case 'throw':
          throw new Error(`p${i} broke`);
        case 'garbage':
          return { decision: 'maybe' } as never;
        case 'delegateThenThrow':
          await next();
          throw new Error(`p${i} broke late`);
        case 'nextTwice':
          await next();
          return next();
        case 'rewrite':
          ctx.rewriteArgs({ ...(ctx.input as object), n: args.n + 1 });
          return undefined;
        case 'badRewrite':
          ctx.rewriteArgs({ ...(ctx.input as object), n: "not a number" });
          return undefined;
      }
    },
    'name',
    { value: `p${i}` },
  );

describe('policy properties', () => {
  it('4, 5: the final decision is the strictest-monotonic fold; a body runs iff allowed or approved once; each ask asks once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 5 }).chain((length) =>
          fc.record({
            length: fc.constant(length),
            calls: fc.array(
              fc.record({ plan: fc.array(behaviour, { minLength: length, maxLength: length }), answer: fc.constantFrom('allowed-once', 'rejected', 'sure') }),
              { minLength: 1, maxLength: 4 },
            ),
          }),
        ),
        decisions,
        async ({ length, calls }, defaultDecision) => {
          const body = vi.fn(({ n }: { j: number; n: number }) => n);
          const tool = defineTool({ name: 't', description: 't', input, mode: 'parallel', execute: body });
          const approve = vi.fn(async (request: { args: unknown }) => {
            await Promise.resolve();
            return calls[(request.args as { j: number }).j]!.answer as 'allowed-once';
          });
          const pipeline = createPipeline({ tools: [tool], pre: Array.from({ length }, (_, i) => policyAt(i)), defaultDecision, approve });
          const toolCalls: ToolCall[] = calls.map((c, j) => ({ id: `c${j}`, name: 't', args: { j, n: j, plan: c.plan } }));
          const results = await pipeline.run(toolCalls);

          let expectedAsks = 0;
          for (const [j, c] of calls.entries()) {
            const result = results[j]!;
            const expected = reference(c.plan, defaultDecision);
            const ran = body.mock.calls.some(([args]) => args.j === j);
            if (expected.failed) {
              expect(result.status).toBe(expected.badRewrite ? 'error' : 'denied');
              expect(result.error?.code).toBe(expected.badRewrite ? 'invalid_rewrite' : 'policy_error');
              expect(ran).toBe(false);
              continue;
            }
            const final = expected.decisions.reduce((a, b) => (LEVEL[b] > LEVEL[a] ? b : a));
            expect(result.decision).toBe(final);
            // 4: never less strict than any decision a policy returned
            for (const d of expected.decisions) expect(LEVEL[result.decision!]).toBeGreaterThanOrEqual(LEVEL[d]);
            // relaxations were refused and traced
            const relaxes = expected.decisions.filter((d, k) => k > 0 && LEVEL[d] < Math.max(...expected.decisions.slice(0, k).map((x) => LEVEL[x])));
            expect(result.trace.filter((e) => e.event === 'relax_refused')).toHaveLength(relaxes.length);
            // 5: the body ran iff allowed, or asked and approved once
            const approved = final === 'ask' && c.answer === 'allowed-once';
            expect(ran).toBe(final === 'allow' || approved);
            expect(result.status).toBe(final === 'allow' || approved ? 'ok' : 'denied');
            if (final === 'ask') expectedAsks++;
            if (result.status === 'ok') {
              expect(result.value).toBe(j + expected.rewrites);
              expect(result.rewrittenBy).toHaveLength(expected.rewrites);
            }
          }
          expect(approve).toHaveBeenCalledTimes(expectedAsks);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
