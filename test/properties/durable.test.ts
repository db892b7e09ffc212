import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createPipeline,
  defineTool,
  memoryJournal,
  type AnyTool,
  type ApprovalResponse,
  type JournalStore,
  type ToolCall,
  type ToolResult,
} from '../../src/index.js';
import { arriving, drive, inTurnOrder, ProcessView, tick } from '../support/crashes.js';
import { gatedToolSpec, gates, type GatedToolSpec } from '../support/gatedTools.js';

const NUM_RUNS = Number(process.env['PROPERTY_RUNS'] ?? 500);
const SECRET = 'the property tests sign with this long secret';

/** One call of a random turn. */
const callSpec = gatedToolSpec(3);
type Spec = GatedToolSpec;

const turnSpec = fc.record({
  calls: fc.array(callSpec, { minLength: 1, maxLength: 8 }),
  /** Ticks before the first run is dropped (a crash); past the end, the run completes. */
  crashAfter: fc.nat({ max: 40 }),
  /** Per resume round: which pending approvals are answered, in what order, and how. */
  rounds: fc.array(fc.record({ pick: fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 6 }), crashAfter: fc.nat({ max: 40 }), tighten: fc.option(fc.nat(), { nil: undefined }) }), { minLength: 1, maxLength: 4 }),
});

/** The world the turn's bodies act on, shared by every "process" (pipeline) that drives the turn. */
class World {
  /** Body starts per call id. */
  readonly starts = new Map<string, number>();
  /** Calls an allowed-once answer was given for. */
  readonly approved = new Set<string>();

  tools(specs: readonly Spec[]): AnyTool[] {
    return specs.map((spec, i) =>
      defineTool({
        name: `t${i}`,
        description: `tool ${i}`,
        input: z.object({ i: z.number() }),
        mode: spec.mode,
        idempotent: spec.idempotent,
        execute: async (_args, ctx) => {
          this.starts.set(ctx.callId, (this.starts.get(ctx.callId) ?? 0) + 1);
          for (let step = 0; step < spec.steps; step++) await tick();
          return `done ${ctx.callId}`;
        },
      }),
    );
  }
}

describe('durable turns (DESIGN.md invariants 1, 5, 8, 9) under random suspends, answers and crashes', () => {
  it('one final result per call in order; no non-idempotent body twice; nothing runs without an allow or an approval; a token works once; resuming never relaxes', async () => {
    await fc.assert(
      fc.asyncProperty(turnSpec, async ({ calls: specs, crashAfter, rounds }) => {
        const journal: JournalStore = memoryJournal();
        const world = new World();
        const ids = specs.map((_, i) => `c${i}`);
        const calls: ToolCall[] = specs.map((_, i) => ({ id: ids[i]!, name: `t${i}`, args: { i } }));
        const deniedEver = new Set<number>();
        const processFor = (deniedToday: ReadonlySet<number>) => {
          const view = new ProcessView(journal);
          const pipeline = createPipeline({
            tools: world.tools(specs),
            journal: view,
            approvalSecret: SECRET,
            pre: [gates(specs, deniedToday)],
            approve: async () => 'suspend',
          });
          return { view, pipeline };
        };
        /** The calls a run answers: those received before any crash, a prefix of the turn, in order. */
        const check = inTurnOrder(ids);

        // The first run, over a stream of calls arriving one tick apart; maybe a crash midway.
        const firstProcess = processFor(new Set());
        const first = await drive(firstProcess.view, firstProcess.pipeline.run(arriving(calls), { turn: 'turn' }), crashAfter);
        if (first !== 'crashed') check(first);
        if ((await journal.read('turn')).length === 0) return; // it crashed before it received anything

        let last: ToolResult[] | undefined;
        const used: ApprovalResponse[] = [];
        for (const round of rounds) {
          const deniedToday = new Set(round.tighten === undefined ? [] : [round.tighten % specs.length]);
          for (const i of deniedToday) deniedEver.add(i);
          const { view, pipeline } = processFor(deniedToday);
          const pending = await pipeline.pendingApprovals('turn');
          const answers: ApprovalResponse[] = [];
          for (const [at, yes] of round.pick) {
            const approval = pending[at % Math.max(1, pending.length)];
            if (approval === undefined || answers.some((a) => a.token === approval.token)) continue;
            answers.push({ token: approval.token, answer: yes ? 'allowed-once' : 'rejected' });
            if (yes) world.approved.add(approval.callId);
          }
          const outcome = await drive(view, pipeline.resume('turn', { answers }), round.crashAfter);
          if (outcome !== 'crashed') {
            check(outcome);
            last = outcome;
            used.push(...answers);
          }
        }

        // Driven to its end — every approval given, no more crashes — the turn finishes: nothing stays
        // suspended, and every call has its final result.
        for (let round = 0; round < specs.length + 1; round++) {
          const { pipeline } = processFor(new Set());
          const pending = await pipeline.pendingApprovals('turn');
          const answers = pending.map(({ token, callId }) => (world.approved.add(callId), { token, answer: 'allowed-once' as const }));
          const results = await pipeline.resume('turn', { answers });
          check(results);
          used.push(...answers);
          last = results;
          if (results.every((r) => r.status !== 'suspended')) break;
        }
        expect(last?.some((r) => r.status === 'suspended'), 'the turn could not be driven to its end').toBe(false);

        // A token works once: a used one is refused, and runs nothing.
        const starts = new Map(world.starts);
        for (const answer of used) await expect(processFor(new Set()).pipeline.resume('turn', { answers: [answer] })).rejects.toMatchObject({ code: 'token_used' });
        expect(world.starts).toEqual(starts);

        for (const [i, spec] of specs.entries()) {
          const id = ids[i]!;
          const ran = world.starts.get(id) ?? 0;
          if (!spec.idempotent) expect(ran, `${id} (not idempotent) ran ${ran} times`).toBeLessThanOrEqual(1);
          if (spec.gate === 'deny') expect(ran, `${id} is denied`).toBe(0);
          if (spec.gate === 'ask' && ran > 0) expect(world.approved.has(id), `${id} ran without an approval`).toBe(true);
        }
        // Resuming never relaxes: a call denied by a round never ran in a later one and stays denied.
        if (last !== undefined) {
          for (const [i, result] of last.entries()) {
            if (result.status === 'denied') expect(specs[i]!.gate === 'deny' || deniedEver.has(i) || result.error.code.startsWith('approval_')).toBe(true);
          }
        }
      }),
      { numRuns: NUM_RUNS },
    );
  }, 600_000);
});
