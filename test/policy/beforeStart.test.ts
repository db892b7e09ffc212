import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type PrePolicy, type StartCheck } from '../../src/index.js';
import { deferred } from '../support/deferred.js';
import { never, tick } from '../faults/helpers.js';

const body = vi.fn((args: { path: string }) => `ran ${args.path}`);
const write = defineTool({ name: 'write', description: 'w', input: z.object({ path: z.string() }), mode: 'parallel', execute: body });
const other = defineTool({ name: 'other', description: 'o', input: z.object({}), mode: 'parallel', execute: () => 'other ran' });

/** A policy that registers `check` for every call to `write`, then lets the rest of the chain decide. */
const registering = (check: StartCheck): PrePolicy =>
  function registering(ctx) {
    if (ctx.call.name === 'write') ctx.beforeStart(check);
    return undefined;
  };

describe('ctx.beforeStart: checks repeated immediately before the body starts', () => {
  it('a check that denies: the body never runs, the result says when and who, and nothing else is cancelled', async () => {
    body.mockClear();
    const results = await createPipeline({ tools: [write, other], pre: [registering(() => ({ decision: 'deny', reason: 'the file changed' }))] }).run([
      { id: '1', name: 'write', args: { path: 'a' } },
      { id: '2', name: 'other', args: {} },
    ]);
    expect(body).not.toHaveBeenCalled();
    expect(results[0]).toMatchObject({ status: 'denied', started: false, decision: 'deny', content: 'Denied before it started, by policy "registering": the file changed.' });
    expect(results[0]!.error).toMatchObject({ code: 'denied', stage: 'start', policy: 'registering', reasons: ['the file changed'] });
    expect(results[0]!.trace.at(-1)).toEqual({ stage: 'start', event: 'decision', policy: 'registering', decision: 'deny', reason: 'the file changed' });
    expect(results[1]!.status).toBe('ok');
  });

  it('runs after the approval was answered, on the arguments the body gets', async () => {
    const order: string[] = [];
    const seen: unknown[] = [];
    const ask: PrePolicy = function ask(ctx) {
      ctx.beforeStart((args) => {
        order.push('check');
        seen.push(args);
        return undefined;
      });
      ctx.rewriteArgs({ path: `/root/${(ctx.input as { path: string }).path}` });
      return { decision: 'ask' };
    };
    const [result] = await createPipeline({
      tools: [write],
      pre: [ask],
      approve: async () => {
        await tick(5);
        order.push('approved');
        return 'allowed-once';
      },
    }).run([{ id: '1', name: 'write', args: { path: 'a' } }]);
    expect(order).toEqual(['approved', 'check']);
    expect(seen).toEqual([{ path: '/root/a' }]);
    expect(result?.content).toBe('ran /root/a');
  });

  it('a check that throws, answers nonsense or never answers fails closed (policy_error, stage start)', async () => {
    const failing: [StartCheck, RegExp][] = [
      [() => { throw new Error('lstat failed'); }, /threw: lstat failed/],
      [() => 'yes' as never, /answered "yes", which is not a start verdict/],
      [() => never(), /did not answer within 50 ms/],
    ];
    for (const [check, message] of failing) {
      const [result] = await createPipeline({ tools: [write], pre: [registering(check)], policyTimeoutMs: 50 }).run([
        { id: '1', name: 'write', args: { path: 'a' } },
      ]);
      expect(result?.status).toBe('denied');
      expect(result?.error).toMatchObject({ code: 'policy_error', stage: 'start', policy: 'registering' });
      expect(result?.content).toMatch(message);
    }
  });

  it('an exclusive call checking holds its barrier; the next call waits for the check', async () => {
    const gate = deferred();
    const exclusive = defineTool({ name: 'write', description: 'w', input: z.object({ path: z.string() }), execute: body });
    const order: string[] = [];
    const after = defineTool({ name: 'other', description: 'o', input: z.object({}), mode: 'parallel', execute: () => void order.push('other') });
    const run = createPipeline({
      tools: [exclusive, after],
      pre: [registering(async () => (await gate.promise, order.push('checked'), undefined))],
    }).run([
      { id: '1', name: 'write', args: { path: 'a' } },
      { id: '2', name: 'other', args: {} },
    ]);
    await tick(5);
    expect(order).toEqual([]);
    gate.resolve();
    await run;
    expect(order).toEqual(['checked', 'other']);
  });

  it('aborting the run while a check is pending cancels the call (not started) and aborts the check', async () => {
    const controller = new AbortController();
    let signal: AbortSignal | undefined;
    const run = createPipeline({ tools: [write], pre: [registering((_args, s) => ((signal = s), never()))] }).run(
      [{ id: '1', name: 'write', args: { path: 'a' } }],
      { signal: controller.signal },
    );
    await tick(5);
    controller.abort();
    const [result] = await run;
    expect(result?.error).toMatchObject({ code: 'cancelled', started: false });
    expect(signal?.aborted).toBe(true);
  });

  it('cannot be registered once the chain ended, nor with something that is not a function', async () => {
    const errors: unknown[] = [];
    const late: PrePolicy = function late(ctx) {
      setTimeout(() => {
        try {
          ctx.beforeStart(() => ({ decision: 'deny' }));
        } catch (error) {
          errors.push(error);
        }
      }, 0);
      return undefined;
    };
    const bad: PrePolicy = function bad(ctx) {
      ctx.beforeStart('check' as never);
      return undefined;
    };
    body.mockClear();
    const [ran] = await createPipeline({ tools: [write], pre: [late] }).run([{ id: '1', name: 'write', args: { path: 'a' } }]);
    await tick(5);
    expect(ran?.status).toBe('ok');
    expect(errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/after its chain ended/) })]);
    const [refused] = await createPipeline({ tools: [write], pre: [bad] }).run([{ id: '1', name: 'write', args: { path: 'a' } }]);
    expect(refused?.error).toMatchObject({ code: 'policy_error', stage: 'pre', policy: 'bad' });
  });
});
