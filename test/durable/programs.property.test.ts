import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createPipeline,
  defineTool,
  memoryJournal,
  runCodeTool,
  type AnyTool,
  type ApprovalResponse,
  type JournalStore,
  type ProgramOutput,
  type ToolCall,
  type ToolResult,
} from '../../src/index.js';
import { arriving, drive, inTurnOrder, ProcessView, tick } from '../support/crashes.js';
import { gatedToolSpec, gates, type GatedToolSpec } from '../support/gatedTools.js';
import { scriptedRuntime, type Script } from './programsRuntime.js';

const NUM_RUNS = Number(process.env['PROPERTY_RUNS'] ?? 500);
const SECRET = 'the property tests sign with this long secret';

const toolSpec = gatedToolSpec(2);
type ToolSpec = GatedToolSpec;

/**
 * A program: steps, each a group of calls made at once (tools picked by number); later arguments depend
 * on earlier results. A `noisy` call's arguments also carry a value that changes every run, as the
 * clock or `Math.random()` would.
 */
const programSpec = fc.array(fc.array(fc.record({ pick: fc.nat(), noisy: fc.boolean() }), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 });
const callSpec = fc.oneof(fc.record({ program: programSpec }), fc.record({ direct: fc.nat() }));

/** Ticks before a run is dropped (a crash), or none: about half the runs crash somewhere. */
const crash = fc.oneof(fc.nat({ max: 80 }), fc.constant(Number.MAX_SAFE_INTEGER));
/** Mostly approvals; now and then a rejection. */
const answer = fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 });

const turnSpec = fc.record({
  tools: fc.array(toolSpec, { minLength: 1, maxLength: 4 }),
  calls: fc.array(callSpec, { minLength: 1, maxLength: 3 }),
  crashAfter: crash,
  /** Per resume round: which pending approvals are answered, in what order, and how; maybe a crash; now and then a tool denied today. */
  rounds: fc.array(
    fc.record({
      pick: fc.array(fc.tuple(fc.nat(), answer), { maxLength: 6 }),
      crashAfter: crash,
      tighten: fc.oneof({ arbitrary: fc.constant(undefined), weight: 4 }, { arbitrary: fc.nat(), weight: 1 }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
});

/**
 * A call's identity across runs and processes: its tool and its arguments but the value that changes
 * every run (`noise`) — unique within a turn by construction. For a program's call: its program, its
 * place in it (step and index), and what the steps before returned (`dep`).
 */
const keyOf = (tool: string, args: unknown) => {
  const { noise: _noise, ...call } = args as Record<string, unknown>;
  return `${tool}${JSON.stringify(Object.fromEntries(Object.entries(call).sort(([a], [b]) => a.localeCompare(b))))}`;
};

/** The world the bodies act on, shared by every "process" (pipeline) that drives the turn. */
class World {
  /** Body starts, by call identity, with the round they happened in. */
  readonly starts: { readonly key: string; readonly tool: number; readonly round: number }[] = [];
  /** Identities an allowed-once answer was given for. */
  readonly approved = new Set<string>();
  round = 0;

  tools(specs: readonly ToolSpec[]): AnyTool[] {
    return specs.map((spec, i) =>
      defineTool({
        name: `t${i}`,
        description: `tool ${i}`,
        input: z.object({ p: z.number(), s: z.number(), j: z.number(), dep: z.number(), noise: z.number().optional() }),
        mode: spec.mode,
        idempotent: spec.idempotent,
        execute: async (args) => {
          const key = keyOf(`t${i}`, args);
          this.starts.push({ key, tool: i, round: this.round });
          for (let step = 0; step < spec.steps; step++) await tick();
          return `done ${key}`;
        },
      }),
    );
  }
}

/**
 * Program `k`'s script: each step's calls at once, each outcome kept; the next step's arguments depend
 * on how many succeeded. Its noisy calls carry the number of the run (a new value every run) — but
 * not to a tool that asks: an approval admits the arguments it was asked for, so a call whose
 * arguments change every run would be asked anew every run, and the turn would never end.
 */
function script(k: number, steps: readonly (readonly { readonly pick: number; readonly noisy: boolean }[])[], specs: readonly ToolSpec[]): Script {
  let runs = 0;
  return async (t) => {
    const noise = ++runs;
    const outcomes: unknown[] = [];
    let dep = 0;
    for (const [s, group] of steps.entries()) {
      const results = await Promise.all(
        group.map(({ pick, noisy }, j) => {
          const tool = pick % specs.length;
          const args = noisy && specs[tool]!.gate !== 'ask' ? { p: k, s, j, dep, noise } : { p: k, s, j, dep };
          return t[`t${tool}`]!(args).then((value) => ({ value }), (error: { code: string }) => ({ code: error.code }));
        }),
      );
      dep = dep * 4 + results.filter((result) => 'value' in result).length;
      outcomes.push(...results);
    }
    return outcomes;
  };
}

/** What the model sees of a result, and of a program its value. */
const observed = (result: ToolResult) => (result.name === 'run_code' && result.status === 'ok' ? (result.value as ProgramOutput).value : [result.status, result.content]);

describe('durable programs (DESIGN.md invariants 1, 5, 8 and 9) under random sub-calls, suspends, answers and crashes', () => {
  it('one result per call in order; no non-idempotent sub-call body twice, though its arguments change every run; nothing runs without an allow or an approval; a token works once; resuming never relaxes; answered in full, a program ends as it would have run at once', async () => {
    await fc.assert(
      fc.asyncProperty(turnSpec, async ({ tools: specs, calls: callSpecs, crashAfter, rounds }) => {
        const journal: JournalStore = memoryJournal();
        const world = new World();
        const scripts: Record<string, Script> = {};
        const calls: ToolCall[] = callSpecs.map((spec, k) => {
          if ('program' in spec) {
            scripts[`program ${k}`] = script(k, spec.program, specs);
            return { id: `c${k}`, name: 'run_code', args: { program: `program ${k}` } };
          }
          return { id: `c${k}`, name: `t${spec.direct % specs.length}`, args: { p: -1, s: k, j: 0, dep: 0 } };
        });
        const ids = calls.map((call) => call.id);
        const runtime = scriptedRuntime(scripts);
        const processFor = (deniedToday: ReadonlySet<number>, store: JournalStore = journal) => {
          const view = new ProcessView(store);
          const pipeline = createPipeline({
            tools: [...world.tools(specs), runCodeTool({ runtime })],
            journal: view,
            approvalSecret: SECRET,
            pre: [gates(specs, deniedToday)],
            approve: async () => 'suspend',
          });
          return { view, pipeline };
        };
        const check = inTurnOrder(ids);
        let plain = true; // no crash, no rejection, no tightening: the outcome must be the run-at-once one
        const denials = new Map<number, Set<number>>(); // round → tools denied in it

        const first = processFor(new Set());
        const firstOutcome = await drive(first.view, first.pipeline.run(arriving(calls), { turn: 'turn' }), crashAfter);
        if (firstOutcome === 'crashed') plain = false;
        else check(firstOutcome);
        if ((await journal.read('turn')).length === 0) return; // it crashed before it received anything

        let last: ToolResult[] | undefined;
        const used: ApprovalResponse[] = [];
        const resumeRound = async (answering: (pending: readonly { token: string; args: unknown; tool: string }[]) => ApprovalResponse[], deniedToday: ReadonlySet<number>, ticks: number) => {
          world.round++;
          denials.set(world.round, new Set(deniedToday));
          const { view, pipeline } = processFor(deniedToday);
          const pending = await pipeline.pendingApprovals('turn');
          const answers = answering(pending);
          for (const answer of answers) {
            const approval = pending.find((p) => p.token === answer.token)!;
            if (answer.answer === 'allowed-once') world.approved.add(keyOf(approval.tool, approval.args));
          }
          const outcome = await drive(view, pipeline.resume('turn', { answers }), ticks);
          if (outcome === 'crashed') return (plain = false);
          check(outcome);
          last = outcome;
          // An answer whose approval is no longer pending was consumed (or withdrawn): it must never work again.
          const still = new Set((await processFor(new Set()).pipeline.pendingApprovals('turn')).map((p) => p.token));
          used.push(...answers.filter((answer) => !still.has(answer.token)));
          return true;
        };

        for (const round of rounds) {
          const deniedToday = new Set(round.tighten === undefined ? [] : [round.tighten % specs.length]);
          if (deniedToday.size > 0) plain = false;
          await resumeRound(
            (pending) => {
              const answers: ApprovalResponse[] = [];
              for (const [at, yes] of round.pick) {
                const approval = pending[at % Math.max(1, pending.length)];
                if (approval === undefined || answers.some((a) => a.token === approval.token)) continue;
                answers.push({ token: approval.token, answer: yes ? 'allowed-once' : 'rejected' });
                if (!yes) plain = false;
              }
              return answers;
            },
            deniedToday,
            round.crashAfter,
          );
        }
        // Then a human approves whatever is asked, until the turn is done.
        for (let n = 0; n < 30 && (last === undefined || last.some((r) => r.status === 'suspended')); n++) {
          await resumeRound((pending) => pending.map(({ token }) => ({ token, answer: 'allowed-once' as const })), new Set(), Number.MAX_SAFE_INTEGER);
        }
        expect(last, 'the turn ends once everything asked is approved').toBeDefined();
        expect(last!.filter((r) => r.status === 'suspended').map((r) => r.id)).toEqual([]);

        // A token works once: a consumed (or withdrawn) one is refused, and runs nothing.
        const starts = world.starts.length;
        for (const answer of used) await expect(processFor(new Set()).pipeline.resume('turn', { answers: [answer] })).rejects.toMatchObject({ code: 'token_used' });
        expect(world.starts).toHaveLength(starts);

        const runs = new Map<string, number>();
        for (const { key } of world.starts) runs.set(key, (runs.get(key) ?? 0) + 1);
        for (const [key, ran] of runs) {
          const spec = specs[Number(/^t(\d+)/.exec(key)![1])]!;
          if (!spec.idempotent) expect(ran, `${key} (not idempotent) ran ${ran} times, whatever the noise in its arguments`).toBeLessThanOrEqual(1);
          expect(spec.gate, `${key} is denied, yet ran`).not.toBe('deny');
          if (spec.gate === 'ask') expect(world.approved.has(key), `${key} ran without an approval`).toBe(true);
        }
        // Resuming never relaxes: no body of a tool denied in a round started in that round.
        for (const { key, tool, round } of world.starts) expect(denials.get(round)?.has(tool) ?? false, `${key} ran in round ${round}, which denied it`).toBe(false);

        if (plain) {
          const reference = await createPipeline({
            tools: [...new World().tools(specs), runCodeTool({ runtime })],
            pre: [gates(specs, new Set())],
            approve: async () => 'allowed-once',
          }).run(calls);
          expect(last!.map(observed)).toEqual(reference.map(observed));
        }
      }),
      { numRuns: NUM_RUNS },
    );
  }, 600_000);
});
