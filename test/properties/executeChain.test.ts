/**
 * Execute middleware that throw, reject, call `next()` twice or late, answer without the body, swallow
 * the body's output, tighten with an aborted signal, or use `next()` as an Observable (piped, retried,
 * subscribed to twice) — in random chains, over random calls (allowed,
 * denied, asked and rejected; bodies that succeed or fail; tools that retry), with every await
 * interleaved by fast-check's scheduler. Whatever the chain does:
 * - a body runs at most once per attempt of its call, and never after the call's result is out;
 * - a call the guard denied never reaches the chain, nor its body;
 * - a call the chain denied (policy_error at stage execute, `denied`) ran no body in its last attempt;
 * - every call gets exactly one result.
 */
import fc from 'fast-check';
import { map, retry } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ExecuteMiddleware, type PrePolicy, type ToolCall } from '../../src/index.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

const BEHAVIOURS = [
  'pass',
  'pass-async',
  'throw-before',
  'reject-before',
  'throw-after',
  'twice',
  'twice-later',
  'late-next',
  'answer',
  'swallow',
  'rethrow-other',
  'tighten-aborted',
  'pipe',
  'retry',
  'subscribe-late',
] as const;
type Behaviour = (typeof BEHAVIOURS)[number];
type Decision = 'allow' | 'deny' | 'reject';

interface Log {
  /** The attempt each call's chain is on, as its outermost middleware saw it. */
  attempt: Map<string, number>;
  /** Body runs per `id attempt`. */
  bodies: Map<string, number>;
  /** Calls whose result is out. */
  resulted: Set<string>;
  /** Bodies that started after their call's result was out. */
  late: string[];
  /** Calls the chain saw. */
  reached: Set<string>;
}

function middleware(s: fc.Scheduler, behaviour: Behaviour, i: number): ExecuteMiddleware {
  const step = (label: string) => s.schedule(Promise.resolve(), `${behaviour} ${i} ${label}`);
  const named = <F extends ExecuteMiddleware>(f: F) => Object.defineProperty(f, 'name', { value: `${behaviour}#${i}` });
  switch (behaviour) {
    case 'pass':
      return named((_ctx, next) => next());
    case 'pass-async':
      return named(async (_ctx, next) => {
        await step('before');
        const output = await next();
        await step('after');
        return output;
      });
    case 'throw-before':
      return named(() => {
        throw new Error('before');
      });
    case 'reject-before':
      return named(async () => {
        await step('before');
        throw new Error('rejected before');
      });
    case 'throw-after':
      return named(async (_ctx, next) => {
        await next().catch(() => undefined);
        throw new Error('after');
      });
    case 'twice':
      return named((_ctx, next) => {
        void next();
        return next();
      });
    case 'twice-later':
      return named(async (_ctx, next) => {
        const output = await next().catch(() => 'failed');
        await step('again');
        await next().catch(() => undefined);
        return output;
      });
    case 'late-next':
      return named((_ctx, next) => {
        void step('late').then(() => next().catch(() => undefined));
        return 'answered';
      });
    case 'answer':
      return named(() => 'answered');
    case 'swallow':
      return named(async (_ctx, next) => {
        void next().catch(() => undefined);
        await step('swallowed');
        return 'swallowed';
      });
    case 'rethrow-other':
      return named(async (_ctx, next) =>
        next().catch(() => {
          throw new Error('not the body\'s');
        }),
      );
    case 'tighten-aborted':
      return named((_ctx, next) => next({ signal: AbortSignal.abort(new Error('already aborted')) }));
    case 'pipe':
      return named((_ctx, next) => next().pipe(map((v) => v)));
    case 'retry':
      return named((_ctx, next) => next().pipe(retry(2)));
    case 'subscribe-late':
      return named(async (_ctx, next) => {
        const answer = next();
        answer.subscribe({ error: () => undefined });
        await step('subscribe');
        return answer.pipe(map((v) => v));
      });
  }
}

function pipelineOf(s: fc.Scheduler, chain: readonly Behaviour[], log: Log) {
  const input = z.object({ fail: z.boolean() });
  const body = async ({ fail }: { fail: boolean }, ctx: { callId: string }) => {
    const key = `${ctx.callId} ${log.attempt.get(ctx.callId)}`;
    log.bodies.set(key, (log.bodies.get(key) ?? 0) + 1);
    if (log.resulted.has(ctx.callId)) log.late.push(key);
    await s.schedule(Promise.resolve(), `body ${key}`);
    if (fail) throw new Error('body failed');
    return 'done';
  };
  const backoff = { initialMs: 1, factor: 1, maxMs: 1, jitter: 0 };
  const tools = [
    defineTool({ name: 'once', description: '', input, mode: 'parallel', execute: body }),
    defineTool({ name: 'retried', description: '', input, mode: 'parallel', idempotent: true, retry: { attempts: 3, backoff }, execute: body }),
    defineTool({ name: 'exclusive', description: '', input, mode: 'exclusive', execute: body }),
  ];
  const outermost: ExecuteMiddleware = (ctx, next) => {
    log.reached.add(ctx.call.id);
    log.attempt.set(ctx.call.id, ctx.attempt);
    return next();
  };
  const decide: PrePolicy = (ctx) => {
    const decision = (ctx.call.id.split(':')[1] ?? 'allow') as Decision;
    return decision === 'allow' ? undefined : { decision: decision === 'deny' ? 'deny' : 'ask' };
  };
  return createPipeline({
    tools,
    execute: [outermost, ...chain.map((behaviour, i) => middleware(s, behaviour, i))],
    pre: [decide],
    approve: async () => 'rejected',
    onError: 'continue',
  });
}

const callArb = fc.record({ tool: fc.constantFrom('once', 'retried', 'exclusive'), decision: fc.constantFrom<Decision>('allow', 'allow', 'deny', 'reject'), fail: fc.boolean() });

describe('execute middleware, property', () => {
  it('never runs a body twice in an attempt, nor one the guard or the chain refused', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.constantFrom(...BEHAVIOURS), { minLength: 1, maxLength: 4 }), fc.array(callArb, { minLength: 1, maxLength: 6 }), async (s, chain, specs) => {
        const log: Log = { attempt: new Map(), bodies: new Map(), resulted: new Set(), late: [], reached: new Set() };
        const calls: ToolCall[] = specs.map((spec, i) => ({ id: `c${i}:${spec.decision}`, name: spec.tool, args: { fail: spec.fail } }));
        const results = pipelineOf(s, chain, log).run(calls).then((all) => {
          for (const result of all) log.resulted.add(result.id);
          return all;
        });
        const all = await s.waitFor(results);
        await s.waitAll(); // late next() calls and swallowed bodies get their turn

        expect(all.map((r) => r.id)).toEqual(calls.map((c) => c.id));
        expect([...log.bodies.entries()].filter(([, runs]) => runs > 1)).toEqual([]);
        expect(log.late).toEqual([]);
        for (const result of all) {
          const guardRefused = !result.id.endsWith(':allow');
          const ran = [...log.bodies.keys()].filter((key) => key.startsWith(`${result.id} `));
          if (guardRefused) {
            expect(log.reached.has(result.id)).toBe(false);
            expect(ran).toEqual([]);
          }
          if (result.status === 'denied' && result.error.code === 'policy_error' && result.error.stage === 'execute') {
            expect(log.bodies.has(`${result.id} ${result.attempts}`)).toBe(false);
          }
          expect(ran.length).toBeLessThanOrEqual(result.attempts);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
