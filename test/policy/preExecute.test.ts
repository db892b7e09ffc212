import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ApprovalRequest, type PipelineOptions, type PreContext, type PrePolicy, type ToolResult } from '../../src/index.js';

const body = vi.fn((args: { path: string; n: number }) => args);
const tool = defineTool({
  name: 'write_file',
  description: 'w',
  input: z.object({ path: z.string(), n: z.number().default(0) }),
  mode: 'parallel',
  execute: body,
});
const run = async (options: Omit<PipelineOptions, 'tools'>, args: unknown = { path: 'a' }): Promise<ToolResult> => {
  body.mockClear();
  const [result] = await createPipeline({ tools: [tool], ...options }).run([{ id: '1', name: 'write_file', args }]);
  return result!;
};
const named = (name: string, policy: PrePolicy): PrePolicy => Object.defineProperty(policy, 'name', { value: name });
const decide = (name: string, decision: 'allow' | 'ask' | 'deny', reason?: string) =>
  named(name, () => (reason === undefined ? { decision } : { decision, reason }));

describe('pre-execute waterfall', () => {
  it('with no policy deciding, defaultDecision applies (allow unless set)', async () => {
    expect((await run({ pre: [named('quiet', () => undefined)] })).status).toBe('ok');
    const denied = await run({ pre: [], defaultDecision: 'deny' });
    expect(denied.error).toMatchObject({ code: 'denied', policy: '(default)' });
    expect(body).not.toHaveBeenCalled();
  });

  it('a decision short-circuits: later policies do not run', async () => {
    const later = vi.fn(() => undefined);
    const result = await run({ pre: [decide('first', 'deny', 'no writes'), later] });
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'denied', policy: 'first', reasons: ['no writes'] });
    expect(result.content).toBe('Denied by policy "first": no writes.');
    expect(later).not.toHaveBeenCalled();
    expect(body).not.toHaveBeenCalled();
  });

  it('returning undefined passes on to the next policy', async () => {
    const result = await run({ pre: [named('pass', () => undefined), decide('second', 'deny')] });
    expect(result.error).toMatchObject({ code: 'denied', policy: 'second' });
  });

  it('next() resolves to the rest of the chain as the guard folded it', async () => {
    const seen: unknown[] = [];
    const outer = named('outer', async (_ctx, next) => {
      seen.push(await next());
      return undefined;
    });
    const relaxer = named('relaxer', async (_ctx, next) => {
      await next();
      return { decision: 'allow' };
    });
    await run({ pre: [outer, relaxer, decide('denier', 'deny', 'nope')] });
    expect(seen).toEqual([{ decision: 'deny', reason: 'nope' }]);
  });

  it('a policy relaxing a downstream deny is refused, traced, and the deny stands', async () => {
    const relaxer = named('relaxer', async (_ctx, next) => {
      await next();
      return { decision: 'allow', reason: 'trust me' };
    });
    const result = await run({ pre: [relaxer, decide('denier', 'deny')] });
    expect(result.status).toBe('denied');
    expect(result.decision).toBe('deny');
    expect(result.trace).toContainEqual({ stage: 'pre', event: 'relax_refused', policy: 'relaxer', from: 'deny', to: 'allow' });
    expect(body).not.toHaveBeenCalled();
  });

  it('a policy may tighten what came back', async () => {
    const tightener = named('tightener', async (_ctx, next) => {
      await next();
      return { decision: 'deny', reason: 'second thoughts' };
    });
    const result = await run({ pre: [tightener] });
    expect(result.error).toMatchObject({ code: 'denied', policy: 'tightener', reasons: ['second thoughts'] });
    expect(result.trace.map((e) => e.event)).toEqual(['decision', 'decision']); // (default) allow, then deny
  });

  it('next() called twice rejects with a clear error, and the policy fails closed', async () => {
    let second: unknown;
    const greedy = named('greedy', async (_ctx, next) => {
      await next();
      await next().catch((error: unknown) => (second = error));
      return next();
    });
    const result = await run({ pre: [greedy] });
    expect((second as Error).message).toBe('next() called twice in pre-execute policy "greedy"');
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'policy_error', stage: 'pre', policy: 'greedy' });
    expect(result.content).toContain('next() called twice');
  });

  it('a throwing policy denies (fail closed) and is named', async () => {
    const result = await run({
      pre: [
        named('flaky', () => {
          throw new Error('db down');
        }),
      ],
    });
    expect(result.status).toBe('denied');
    expect(result.decision).toBe('deny');
    expect(result.error).toMatchObject({ code: 'policy_error', stage: 'pre', policy: 'flaky' });
    expect(result.content).toBe('Denied: pre-execute policy "flaky" threw: db down (policies fail closed).');
  });

  it('a policy returning something that is not a decision denies', async () => {
    for (const garbage of [{ decision: 'yes' }, 'allow', 42, { decision: 'allow', reason: 7 }]) {
      const result = await run({ pre: [named('odd', () => garbage as never)] });
      expect(result.error).toMatchObject({ code: 'policy_error', policy: 'odd' });
    }
  });

  it('a failure further in cannot be swallowed by a policy further out', async () => {
    const forgiving = named('forgiving', async (_ctx, next) => {
      await next().catch(() => undefined);
      return { decision: 'allow' };
    });
    const result = await run({
      pre: [
        forgiving,
        named('broken', () => {
          throw new Error('bug');
        }),
      ],
    });
    expect(result.error).toMatchObject({ code: 'policy_error', policy: 'broken' });
    expect(body).not.toHaveBeenCalled();
  });

  it('an unnamed policy is named by its position', async () => {
    const result = await run({ pre: [(() => undefined) as PrePolicy, Object.defineProperty(() => ({ decision: 'deny' as const }), 'name', { value: '' })] });
    expect(result.error).toMatchObject({ policy: 'pre[1]' });
  });

  it('ctx gives the call, the tool, the current arguments, the index and a signal', async () => {
    let seen: PreContext | undefined;
    await run({ pre: [named('peek', (ctx) => void (seen = ctx))] }, '{"path":"x"}');
    expect(seen!.call).toEqual({ id: '1', name: 'write_file', args: '{"path":"x"}' });
    expect(seen!.tool).toBe(tool);
    expect(seen!.args).toEqual({ path: 'x', n: 0 }); // validated, defaults applied
    expect(seen!.input).toEqual({ path: 'x' }); // as sent
    expect(seen!.index).toBe(0);
    expect(seen!.signal).toBeInstanceOf(AbortSignal);
  });
});

describe('argument rewrites', () => {
  const rewrite = (name: string, args: unknown) => named(name, (ctx) => void ctx.rewriteArgs(args));

  it('later policies and the body see the rewritten arguments; the result keeps both', async () => {
    let seenByLater: unknown;
    const result = await run({ pre: [rewrite('abs', { path: '/abs/a' }), named('later', (ctx) => void (seenByLater = ctx.args))] });
    expect(seenByLater).toEqual({ path: '/abs/a', n: 0 });
    expect(body).toHaveBeenCalledWith({ path: '/abs/a', n: 0 }, expect.anything());
    expect(result.args).toEqual({ path: '/abs/a', n: 0 });
    expect(result.originalArgs).toEqual({ path: 'a', n: 0 });
    expect(result.rewrittenBy).toEqual(['abs']);
    expect(result.trace).toContainEqual({ stage: 'pre', event: 'rewrite', policy: 'abs' });
  });

  it('a rewrite the schema rejects ends the call with invalid_rewrite naming the policy; the tool never runs', async () => {
    const result = await run({ pre: [rewrite('sloppy', { path: 42 })] });
    expect(result.status).toBe('error');
    expect(result.error).toMatchObject({ code: 'invalid_rewrite', policy: 'sloppy' });
    expect(result.content).toContain('- path:');
    expect(body).not.toHaveBeenCalled();
  });

  it('a policy that catches its rejected rewrite leaves the arguments as they were', async () => {
    const careful = named('careful', (ctx) => {
      try {
        ctx.rewriteArgs({ path: 42 });
      } catch {
        return undefined;
      }
      return undefined;
    });
    const result = await run({ pre: [careful] });
    expect(result.status).toBe('ok');
    expect(result.rewrittenBy).toEqual([]);
  });

  it('a rewrite survives a later ask and is what the approver sees', async () => {
    const approve = vi.fn(async (_request: ApprovalRequest) => 'allowed-once' as const);
    const result = await run({ pre: [rewrite('abs', { path: '/abs/a' }), decide('asker', 'ask', 'writes')], approve });
    expect(approve.mock.calls[0]![0]).toMatchObject({ args: { path: '/abs/a', n: 0 }, reasons: ['writes'] });
    expect(result.args).toEqual({ path: '/abs/a', n: 0 });
  });
});

describe('policy time limit', () => {
  it('a chain that has not decided within policyTimeoutMs fails closed, blaming the pending policy, whose signal aborts', async () => {
    let signal: AbortSignal | undefined;
    const stuck = named('stuck', (ctx) => ((signal = ctx.signal), new Promise<undefined>(() => {})));
    const outer = named('outer', (_ctx, next) => next());
    const result = await run({ pre: [outer, stuck], policyTimeoutMs: 15 });
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'policy_error', stage: 'pre', policy: 'stuck' });
    expect(result.content).toBe('Denied: pre-execute policy "stuck" did not decide within 15 ms (policies fail closed).');
    expect(signal?.aborted).toBe(true);
    expect(body).not.toHaveBeenCalled();
  });

  it('policyTimeoutMs is validated', () => {
    expect(() => createPipeline({ tools: [tool], policyTimeoutMs: 0 })).toThrow(/`policyTimeoutMs` must be 1 to 2147483647 milliseconds, or Infinity/);
    expect(() => createPipeline({ tools: [tool], policyTimeoutMs: 2 ** 31 })).toThrow(/`policyTimeoutMs`/); // would fire after 1 ms
    expect(() => createPipeline({ tools: [tool], policyTimeoutMs: Infinity })).not.toThrow();
  });
});

describe('rewrites after next()', () => {
  it('are refused: a policy cannot change the arguments the later policies already allowed', async () => {
    const sneaky = named('sneaky', async (ctx, next) => {
      await next();
      ctx.rewriteArgs({ path: '/etc/passwd' });
      return undefined;
    });
    const checker = named('checker', (ctx) => ((ctx.args as { path: string }).path.startsWith('/etc') ? { decision: 'deny' } : undefined));
    const result = await run({ pre: [sneaky, checker] });
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'policy_error', policy: 'sneaky' });
    expect(result.content).toContain('rewriteArgs() after next()');
    expect(body).not.toHaveBeenCalled();
  });

  it('a policy that catches the refusal leaves the arguments as the later policies saw them', async () => {
    const polite = named('polite', async (ctx, next) => {
      const verdict = await next();
      try {
        ctx.rewriteArgs({ path: '/etc/passwd' });
      } catch {
        /* refused */
      }
      return verdict;
    });
    const result = await run({ pre: [polite] });
    expect(result.status).toBe('ok');
    expect(body).toHaveBeenCalledWith({ path: 'a', n: 0 }, expect.anything());
  });
});

it('a call whose pre-execute chain is pending when the run aborts is cancelled (not denied), and the policy sees its signal abort', async () => {
  let policySignal: AbortSignal | undefined;
  const slow = named('slow', (ctx) => ((policySignal = ctx.signal), new Promise<undefined>(() => {})));
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 5);
  const [result] = await createPipeline({ tools: [tool], pre: [slow] }).run([{ id: '1', name: 'write_file', args: { path: 'a' } }], {
    signal: controller.signal,
  });
  expect(result!.status).toBe('cancelled');
  expect(result!.error).toMatchObject({ code: 'cancelled', reason: 'aborted', started: false });
  expect(policySignal?.aborted).toBe(true);
});
