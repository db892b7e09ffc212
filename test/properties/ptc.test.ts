/**
 * The PTC invariants of DESIGN.md: writing a program bypasses nothing, and a program learns nothing the
 * model would not see. For random batches of calls (tool, policy gate, approval, outcome, timing), made
 * once by the model directly and once by a program, the same bodies run with the same arguments, the
 * same calls are asked about, every call gets the same status and error code, and the program's own pool
 * keeps its limit and barriers. For random outcomes, post-execute policies and budgets, what the program
 * observed of each call is exactly what the model saw of the same call made directly.
 * Real QuickJS and real timers, so fewer runs than the pure properties.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createPipeline,
  defineTool,
  runCodeTool,
  type PostPolicy,
  type PrePolicy,
  type ProgramOutput,
  type RetentionBudget,
  type ToolCall,
  type ToolContext,
} from '../../src/index.js';
import { createQuickJSRuntime } from '../../src/ptc/quickjs/index.js';
import { renderValue } from '../../src/util/renderContent.js';
import { BodyMonitor } from '../support/monitor.js';

const RUNS = Math.max(10, Math.round(Number(process.env.PROPERTY_RUNS ?? 1000) / 10));
const MAX_PARALLEL = 3;

const runtime = createQuickJSRuntime({ timeoutMs: 20_000 });
afterAll(() => runtime.close());

const spec = z.object({
  key: z.string(),
  gate: z.enum(['allow', 'deny', 'ask-yes', 'ask-no']),
  outcome: z.enum(['ok', 'throw']),
  ms: z.number().int().min(0),
});
type Spec = z.output<typeof spec>;

const specs = fc
  .array(
    fc.record({
      tool: fc.oneof({ arbitrary: fc.constant('read'), weight: 6 }, { arbitrary: fc.constant('write'), weight: 2 }, { arbitrary: fc.constant('missing'), weight: 1 }),
      gate: fc.oneof({ arbitrary: fc.constant('allow'), weight: 4 }, { arbitrary: fc.constantFrom('deny', 'ask-yes', 'ask-no'), weight: 3 }),
      outcome: fc.oneof({ arbitrary: fc.constant('ok'), weight: 3 }, { arbitrary: fc.constant('throw'), weight: 1 }),
      ms: fc.integer({ min: 1, max: 6 }),
      // How the program waits: with the previous call(s) in one Promise.allSettled group, or alone.
      joinPrevious: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
    }),
    { minLength: 1, maxLength: 16 },
  )
  .map((calls) => calls.map((call, i) => ({ ...call, key: `k${i}` })));

function world() {
  const monitor = new BodyMonitor();
  const ran: string[] = [];
  const asked: string[] = [];
  const body = (exclusive: boolean) => async (args: Spec, ctx: ToolContext) => {
    monitor.enter(args.key, exclusive, ctx);
    ran.push(args.key);
    try {
      await sleep(args.ms);
      if (args.outcome === 'throw') throw new Error(`${args.key} failed`);
      return { key: args.key };
    } finally {
      monitor.exit(args.key, exclusive);
    }
  };
  const tools = [
    defineTool({ name: 'read', description: 'read', input: spec, mode: 'parallel', execute: body(false) }),
    defineTool({ name: 'write', description: 'write', input: spec, mode: 'exclusive', execute: body(true) }),
  ];
  const gate: PrePolicy = async (ctx) => {
    if (ctx.call.name === 'run_code') return { decision: 'allow' };
    const { gate } = ctx.args as Spec;
    return { decision: gate === 'allow' ? 'allow' : gate === 'deny' ? 'deny' : 'ask' };
  };
  const pipeline = createPipeline({
    tools: [...tools, runCodeTool({ runtime, maxParallelSubCalls: MAX_PARALLEL })],
    pre: [gate],
    approve: async (request) => {
      const { key, gate } = request.args as Spec;
      asked.push(key);
      return gate === 'ask-yes' ? 'allowed-once' : 'rejected';
    },
    onError: 'continue',
  });
  return { pipeline, monitor, ran, asked };
}

/** The program: groups of calls awaited with Promise.allSettled, group after group, each outcome recorded. */
function programFor(calls: readonly (Spec & { tool: string; joinPrevious: boolean })[]): string {
  const groups: string[][] = [];
  for (const call of calls) {
    const expression = `tools[${JSON.stringify(call.tool)}]?.(${JSON.stringify({ key: call.key, gate: call.gate, outcome: call.outcome, ms: call.ms })}) ?? Promise.reject({ code: 'not_in_tools' })`;
    if (call.joinPrevious && groups.length > 0) groups.at(-1)!.push(expression);
    else groups.push([expression]);
  }
  return [
    'const outcomes: Record<string, string>[] = [];',
    ...groups.map((group) => `for (const settled of await Promise.allSettled([${group.join(', ')}])) outcomes.push(settled.status === 'fulfilled' ? { status: 'ok' } : { status: 'failed', code: settled.reason.code });`),
    'return outcomes;',
  ].join('\n');
}

describe('PTC: a program bypasses nothing', () => {
  it('runs the same bodies, asks the same questions and gives the same outcomes as direct calls', async () => {
    await fc.assert(
      fc.asyncProperty(specs, async (calls) => {
        const direct = world();
        const directCalls: ToolCall[] = calls.map((call) => ({ id: call.key, name: call.tool, args: { key: call.key, gate: call.gate, outcome: call.outcome, ms: call.ms } }));
        const directResults = await direct.pipeline.run(directCalls);

        const viaProgram = world();
        const [outer] = await viaProgram.pipeline.run([{ id: 'p', name: 'run_code', args: { program: programFor(calls) } }]);
        expect(outer?.status, outer?.content).toBe('ok');
        const { value, subCalls } = outer!.value as ProgramOutput;
        const outcomes = value as { status: string; code?: string }[];

        // The same bodies ran (the program may overlap them differently), the same calls were asked about.
        expect([...viaProgram.ran].sort()).toEqual([...direct.ran].sort());
        expect([...viaProgram.asked].sort()).toEqual([...direct.asked].sort());
        // Tools outside `tools` (here: unknown ones) never reach the pipeline from a program.
        const reachable = calls.filter((call) => call.tool !== 'missing');
        expect(subCalls.map((sub) => (sub.args as Spec).key)).toEqual(reachable.map((call) => call.key));
        // Every call: the same status and error code as when the model made it directly.
        const byKey = new Map(directResults.map((result) => [result.id, result]));
        calls.forEach((call, i) => {
          const expected = byKey.get(call.key)!;
          if (call.tool === 'missing') {
            expect(expected.error?.code).toBe('unknown_tool');
            expect(outcomes[i]).toEqual({ status: 'failed', code: 'not_in_tools' });
          } else {
            expect(outcomes[i]).toEqual(expected.status === 'ok' ? { status: 'ok' } : { status: 'failed', code: expected.error?.code });
          }
        });
        for (const sub of subCalls) {
          const expected = byKey.get((sub.args as Spec).key)!;
          expect([sub.status, sub.error?.code, sub.decision]).toEqual([expected.status, expected.error?.code, expected.decision]);
        }
        // The program's pool: its limit and its barriers held.
        expect(viaProgram.monitor.violations).toEqual([]);
        expect(viaProgram.monitor.maxRunning).toBeLessThanOrEqual(MAX_PARALLEL);
      }),
      { numRuns: RUNS },
    );
  });
});

/** What the tool's output (or failure) carries and the policies try to keep from the model. */
const SECRET = 'sk-live-7Qx2';

const outcomeSpec = z.object({
  outcome: z.enum(['object', 'string', 'stream-strings', 'stream-objects', 'stream-fail', 'throw', 'timeout']),
  gate: z.enum(['allow', 'deny', 'ask-no']),
  // A negative size fails the schema: an `invalid_args` result.
  size: z.number().int().min(0),
  blockable: z.boolean(),
});
type OutcomeSpec = z.output<typeof outcomeSpec>;

const outcomeCalls = fc.array(
  fc.record({
    outcome: fc.constantFrom(...outcomeSpec.shape.outcome.options),
    gate: fc.oneof({ arbitrary: fc.constant('allow' as const), weight: 5 }, { arbitrary: fc.constantFrom('deny' as const, 'ask-no' as const), weight: 1 }),
    size: fc.oneof({ arbitrary: fc.integer({ min: 0, max: 600 }), weight: 8 }, { arbitrary: fc.constant(-1), weight: 1 }),
    blockable: fc.boolean(),
  }),
  { minLength: 1, maxLength: 8 },
);

/** Post-execute policies of `t`'s calls, each deciding for some outcomes and delegating the rest to the next. */
const POST: Record<string, PostPolicy> = {
  redact: async (ctx, next) => (ctx.content.includes(SECRET) ? { kind: 'accept', content: ctx.content.replaceAll(SECRET, '[redacted]') } : next()),
  block: async (ctx, next) => (ctx.status === 'ok' && (ctx.args as OutcomeSpec).blockable ? { kind: 'block', feedback: 'withheld by policy' } : next()),
  swapValue: async (ctx, next) => (ctx.status === 'ok' ? { kind: 'accept', value: { swapped: SECRET } } : next()),
  replaceBoth: async (ctx, next) => (ctx.status === 'ok' ? { kind: 'accept', value: { n: 1 }, content: '{"n":1}' } : next()),
  annotateErrors: async (ctx, next) => (ctx.status !== 'ok' ? { kind: 'accept', content: `${ctx.content}\n(see the runbook)` } : next()),
};
const ofT = (policy: PostPolicy): PostPolicy => (ctx, next) => (ctx.tool?.name === 't' ? policy(ctx, next) : next());

const budgets: fc.Arbitrary<RetentionBudget | undefined> = fc.option(
  fc.record(
    {
      maxChars: fc.integer({ min: 10, max: 400 }),
      maxLines: fc.integer({ min: 1, max: 8 }),
      maxItems: fc.integer({ min: 1, max: 4 }),
      keep: fc.constantFrom('head' as const, 'head+tail' as const),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

/** Text of `size` characters in lines of 40, led by the secret. */
const text = (size: number) => `${SECRET} ${'0123456789 abcdefghijklmnopqrstuvwxyz ..\n'.repeat(Math.ceil(size / 40))}`.slice(0, SECRET.length + 1 + size);

function outcomeWorld(post: readonly string[], budget: RetentionBudget | undefined) {
  const tool = defineTool({
    name: 't',
    description: 'a tool of every outcome',
    input: outcomeSpec,
    mode: 'parallel',
    timeoutMs: 20,
    execute: async function ({ outcome, size }: OutcomeSpec, { signal }: ToolContext): Promise<unknown> {
      switch (outcome) {
        case 'object': return { text: text(size), size };
        case 'string': return text(size);
        case 'throw': throw new Error(text(size));
        case 'timeout': return sleep(2_000, undefined, { signal });
        default: return items(outcome, size);
      }
    },
  });
  const gate: PrePolicy = async (ctx) => {
    if (ctx.call.name === 'run_code') return { decision: 'allow' };
    const { gate } = ctx.args as OutcomeSpec;
    return gate === 'allow' ? { decision: 'allow' } : { decision: gate === 'deny' ? 'deny' : 'ask', reason: `holds ${SECRET}` };
  };
  return createPipeline({
    tools: [tool, runCodeTool({ runtime })],
    pre: [gate],
    post: post.map((name) => ofT(POST[name]!)),
    approve: async () => 'rejected',
    retention: { tools: budget === undefined ? {} : { t: budget } },
    onError: 'continue',
  });
}

async function* items(outcome: string, size: number): AsyncGenerator<unknown> {
  for (let i = 0; i < 5; i++) yield outcome === 'stream-objects' ? { i, text: text(size / 5) } : text(size / 5);
  if (outcome === 'stream-fail') throw new Error(`stream broke: ${text(size)}`);
}

describe('PTC: a program learns nothing the model would not see', () => {
  it('observes each call exactly as the model sees it: a value rendered as the content, or the content as the error message', async () => {
    await fc.assert(
      fc.asyncProperty(outcomeCalls, fc.shuffledSubarray(Object.keys(POST)), budgets, async (calls, post, budget) => {
        const direct = await outcomeWorld(post, budget).run(calls.map((args, i) => ({ id: `k${i}`, name: 't', args })));
        const program = [
          'const seen = [];',
          ...calls.map((args) => `try { seen.push({ ok: await tools.t(${JSON.stringify(args)}) }); } catch (e) { seen.push({ code: e.code, message: e.message }); }`),
          'return seen;',
        ].join('\n');
        const [outer] = await outcomeWorld(post, budget).run([{ id: 'p', name: 'run_code', args: { program } }]);
        expect(outer?.status, outer?.content).toBe('ok');
        const seen = (outer!.value as ProgramOutput).value as ({ ok: unknown } | { code: string; message: string })[];
        direct.forEach((result, i) => {
          if (result.status === 'ok') {
            expect(seen[i]).toHaveProperty('ok');
            // A value only when its own rendering is the model's text; else the text itself.
            expect(renderValue((seen[i] as { ok: unknown }).ok, result.streamed)).toBe(result.content);
          } else {
            expect(seen[i]).toEqual({ code: result.error.code, message: result.content });
          }
        });
      }),
      { numRuns: RUNS },
    );
  });
});
