/**
 * A resume can only tighten, by construction (DESIGN.md, Durable turns): the decision journaled for a
 * call bounds whatever today's policies decide — an ask without an answer stays suspended, a deny stays
 * denied, an allow may become ask or deny — whatever the chain does or skips. Random chains of policies
 * (passing, delegating, deciding early without `next()`, overriding after `next()`, throwing) decide a
 * turn, some calls suspend; then other random chains resume it with random answers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { foldTurn } from '../../src/durable/turnState.js';
import {
  createPipeline,
  defineTool,
  memoryJournal,
  suspendApprovals,
  type ApprovalResponse,
  type Decision,
  type JournalStore,
  type PrePolicy,
  type ToolResult,
} from '../../src/index.js';

const NUM_RUNS = Number(process.env['PROPERTY_RUNS'] ?? 300);
const SECRET = 'the resume-tightening property signs with this secret';
const STRICTNESS: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

/** A policy, as data: what it does with the call (the same for every call of a given tool index parity). */
type PolicySpec =
  | { readonly kind: 'pass' }
  | { readonly kind: 'delegate' }
  | { readonly kind: 'early'; readonly decision: Decision; readonly only: number | undefined }
  | { readonly kind: 'after'; readonly decision: Decision; readonly only: number | undefined }
  | { readonly kind: 'throws'; readonly only: number };

const decisionArb = fc.constantFrom<Decision>('allow', 'ask', 'deny');
const onlyArb = fc.option(fc.nat(5), { nil: undefined });
const policyArb: fc.Arbitrary<PolicySpec> = fc.oneof(
  fc.constant({ kind: 'pass' as const }),
  fc.constant({ kind: 'delegate' as const }),
  fc.record({ kind: fc.constant('early' as const), decision: decisionArb, only: onlyArb }),
  fc.record({ kind: fc.constant('after' as const), decision: decisionArb, only: onlyArb }),
  fc.record({ kind: fc.constant('throws' as const), only: fc.nat(5) }),
);
const chainArb = fc.array(policyArb, { maxLength: 4 });

/** A policy from its spec; `only`: it acts on that call index alone, and passes the others. */
function policyOf(spec: PolicySpec, n: number): PrePolicy {
  const policy: PrePolicy = (ctx, next) => {
    if ('only' in spec && spec.only !== undefined && spec.only !== ctx.index) return undefined;
    switch (spec.kind) {
      case 'pass':
        return undefined;
      case 'delegate':
        return next();
      case 'early':
        return { decision: spec.decision, reason: `p${n} early ${spec.decision}` };
      case 'after':
        return next().then(() => ({ decision: spec.decision, reason: `p${n} after ${spec.decision}` }));
      case 'throws':
        throw new Error(`p${n} throws`);
    }
  };
  Object.defineProperty(policy, 'name', { value: `p${n}` });
  return policy;
}

const turnArb = fc.record({
  modes: fc.array(fc.constantFrom<'parallel' | 'exclusive'>('parallel', 'exclusive'), { minLength: 1, maxLength: 6 }),
  before: chainArb,
  today: chainArb,
  /** Per call: no answer, or the answer given to its pending approval if it has one. */
  answers: fc.array(fc.constantFrom<'none' | 'allowed-once' | 'rejected'>('none', 'allowed-once', 'rejected'), { minLength: 6, maxLength: 6 }),
});

describe('resuming only tightens, whatever today\'s policies do or skip', () => {
  it('an ask without an answer stays suspended, a deny stays denied, nothing runs twice or without an allow', async () => {
    await fc.assert(
      fc.asyncProperty(turnArb, async ({ modes, before, today, answers }) => {
        const starts = new Map<string, number>();
        const tools = modes.map((mode, i) =>
          defineTool({ name: `t${i}`, description: `tool ${i}`, input: z.object({}), mode, onError: 'continue', execute: (_args, { callId }) => (starts.set(callId, (starts.get(callId) ?? 0) + 1), callId) }),
        );
        const journal: JournalStore = memoryJournal();
        const pipelineOf = (chain: readonly PolicySpec[]) =>
          createPipeline({ tools, journal, approvalSecret: SECRET, pre: chain.map(policyOf), approve: suspendApprovals(), defaultDecision: 'allow' });
        const calls = modes.map((_, i) => ({ id: `c${i}`, name: `t${i}`, args: {} }));
        await pipelineOf(before).run(calls, { turn: 't' });

        const journaled = foldTurn(await journal.read('t'));
        const pending = await pipelineOf(today).pendingApprovals('t');
        const given: ApprovalResponse[] = [];
        const answerOf = new Map<number, 'allowed-once' | 'rejected'>();
        for (const approval of pending) {
          const answer = answers[approval.index]!;
          if (answer === 'none') continue;
          given.push({ token: approval.token, answer });
          answerOf.set(approval.index, answer);
        }
        const startsBefore = new Map(starts);
        const resumed: ToolResult[] = await pipelineOf(today).resume('t', { answers: given });

        expect(resumed.map((r) => r.id)).toEqual(calls.map((c) => c.id));
        for (const result of resumed) {
          const call = journaled.get(result.index)!;
          const ran = (starts.get(result.id) ?? 0) - (startsBefore.get(result.id) ?? 0);
          expect(starts.get(result.id) ?? 0, `${result.id} ran at most once`).toBeLessThanOrEqual(1);
          if (call.finished !== undefined) {
            expect(ran, `${result.id} finished before: replayed`).toBe(0);
            continue;
          }
          const bound = call.decision;
          if (bound === 'deny') expect(result.status, `${result.id} stays denied`).not.toBe('ok');
          if (bound !== undefined && STRICTNESS[bound] >= STRICTNESS.ask && answerOf.get(result.index) !== 'allowed-once') {
            // An ask without an allowed-once answer never runs, whatever today's chain returned.
            expect(ran, `${result.id}: journaled ${bound}, answered ${answerOf.get(result.index) ?? 'nothing'}`).toBe(0);
            expect(result.status).not.toBe('ok');
            if (bound === 'ask' && !answerOf.has(result.index) && result.status !== 'denied' && result.status !== 'cancelled') {
              expect(result.status, `${result.id} still waits`).toBe('suspended');
            }
          }
          if (result.status === 'ok') {
            // It ran now: today's final decision is at least as strict as the journaled one, and it was
            // allowed (or approved once).
            const trace = result.trace.filter((entry) => entry.stage === 'pre' && entry.event === 'decision');
            expect(trace.length + (bound === undefined ? 1 : 0), `${result.id} went through the chain`).toBeGreaterThan(0);
            expect(bound === undefined || bound === 'allow' || answerOf.get(result.index) === 'allowed-once').toBe(true);
          }
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('the finding: a policy that allows without calling next() does not run a call suspended before, on a resume without an answer', async () => {
    let ran = 0;
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (ran++, 'wrote') });
    const journal = memoryJournal();
    const ask: PrePolicy = function ask() {
      return { decision: 'ask', reason: 'a write' };
    };
    const allowEarly: PrePolicy = function allowEarly() {
      return { decision: 'allow' };
    };
    const first = createPipeline({ tools: [write], journal, approvalSecret: SECRET, pre: [ask], approve: suspendApprovals() });
    expect((await first.run([{ id: 'w', name: 'write', args: {} }], { turn: 't' }))[0]!.status).toBe('suspended');
    const loose = createPipeline({ tools: [write], journal, approvalSecret: SECRET, pre: [allowEarly], approve: suspendApprovals() });
    const [result] = await loose.resume('t');
    expect(result).toMatchObject({ status: 'suspended', error: { code: 'approval_pending' } });
    expect(ran).toBe(0);
    expect(await loose.pendingApprovals('t')).toHaveLength(1);
  });
});
