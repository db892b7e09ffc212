import { interval, map, take } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type PostPolicy, type ToolCall } from '../../src/index.js';

const named = (name: string, policy: PostPolicy): PostPolicy => Object.defineProperty(policy, 'name', { value: name });
const read = defineTool({ name: 'read', description: 'r', input: z.object({ text: z.string() }), mode: 'parallel', execute: ({ text }) => ({ text }) });
const fail = defineTool({ name: 'fail', description: 'f', input: z.object({}), onError: 'continue', execute: () => Promise.reject(new Error('disk gone')) });
const lines = defineTool({
  name: 'lines',
  description: 'l',
  input: z.object({ n: z.number(), failAt: z.number().optional() }),
  mode: 'parallel',
  onError: 'continue',
  execute: ({ n, failAt }) =>
    interval(0).pipe(
      take(n),
      map((i) => {
        if (i === failAt) throw new Error('stream broke');
        return `line ${i}\n`;
      }),
    ),
});
const tools = [read, fail, lines];
const call = (name: string, args: unknown, id = name): ToolCall => ({ id, name, args });

describe('post-execute policies', () => {
  it('accept may replace content and value and merge meta', async () => {
    const upper = named('upper', () => ({ kind: 'accept', content: 'REPLACED', value: 'v2', meta: { checked: true } }));
    const tag = named('tag', async (_ctx, next) => {
      await next();
      return { kind: 'accept', meta: { by: 'tag' } };
    });
    const [result] = await createPipeline({ tools, post: [tag, upper] }).run([call('read', { text: 'hi' })]);
    expect(result).toMatchObject({ status: 'ok', content: 'REPLACED', value: 'v2', meta: { checked: true, by: 'tag' } });
    expect(Object.isFrozen(result!.meta)).toBe(true);
  });

  it('a policy sees the rendered content and the outcome of the policies after it', async () => {
    const seen: string[] = [];
    const outer = named('outer', async (ctx, next) => {
      seen.push(ctx.content);
      await next();
      seen.push(ctx.content);
      return undefined;
    });
    await createPipeline({ tools, post: [outer, named('inner', () => ({ kind: 'accept', content: 'inner was here' }))] }).run([
      call('read', { text: 'hi' }),
    ]);
    expect(seen).toEqual(['{"text":"hi"}', 'inner was here']);
  });

  it('block withholds the output and turns the feedback into an error result', async () => {
    const guard = named('noSecrets', (ctx) => (ctx.content.includes('sk-') ? { kind: 'block', feedback: 'The output held a key and was withheld.' } : undefined));
    const [blocked, fine] = await createPipeline({ tools, post: [guard] }).run([call('read', { text: 'sk-123' }, 'a'), call('read', { text: 'ok' }, 'b')]);
    expect(blocked).toMatchObject({ status: 'error', content: 'The output held a key and was withheld.' });
    expect(blocked!.value).toBeUndefined();
    expect(blocked!.error).toEqual({ code: 'blocked', message: 'The output held a key and was withheld.', policy: 'noSecrets' });
    expect(fine!.status).toBe('ok');
  });

  it('an accept further out cannot undo a block (refused and traced)', async () => {
    const relax = named('relax', async (_ctx, next) => {
      await next();
      return { kind: 'accept', content: 'all good' };
    });
    const [result] = await createPipeline({ tools, post: [relax, named('blocker', () => ({ kind: 'block', feedback: 'no' }))] }).run([
      call('read', { text: 'x' }),
    ]);
    expect(result).toMatchObject({ status: 'error', content: 'no' });
    expect(result!.trace).toContainEqual({ stage: 'post', event: 'relax_refused', policy: 'relax', from: 'block', to: 'accept' });
  });

  it('a throwing post policy blocks (fail closed)', async () => {
    const broken = named('broken', () => {
      throw new Error('scanner down');
    });
    const [result] = await createPipeline({ tools, post: [broken] }).run([call('read', { text: 'x' })]);
    expect(result!.status).toBe('error');
    expect(result!.error).toMatchObject({ code: 'policy_error', stage: 'post', policy: 'broken' });
    expect(result!.content).toContain('was withheld');
    expect(result!.value).toBeUndefined();
  });

  it('failed and denied results pass through: context may be added, but never success', async () => {
    const seen: string[] = [];
    const context = named('context', (ctx) => {
      seen.push(`${ctx.call.id}:${ctx.status}:${ctx.error?.code}`);
      return { kind: 'accept', content: `${ctx.content} (hint: check the disk)`, value: 'forged success' };
    });
    const [failed, unknown] = await createPipeline({ tools, post: [context] }).run([call('fail', {}, 'f'), call('nope', {}, 'u')]);
    expect(seen.sort()).toEqual(['f:error:tool_error', 'u:error:unknown_tool']);
    expect(failed).toMatchObject({ status: 'error', content: 'Tool "fail" failed: disk gone (hint: check the disk)' });
    expect(failed!.value).toBeUndefined();
    expect(failed!.error?.code).toBe('tool_error');
    expect(unknown!.status).toBe('error');

    const blocker = named('blocker', () => ({ kind: 'block', feedback: 'withheld' }));
    const [stillFailed] = await createPipeline({ tools, post: [blocker] }).run([call('fail', {})]);
    expect(stillFailed).toMatchObject({ status: 'error', content: 'withheld' });
    expect(stillFailed!.error?.code).toBe('tool_error'); // the failure keeps its own error
  });

  it('post policies run concurrently; results still come out in model order', async () => {
    const slowFirst = named('slow', async (ctx) => {
      if (ctx.index === 0) await new Promise((r) => setTimeout(r, 20));
      return undefined;
    });
    const results = await createPipeline({ tools, post: [slowFirst] }).run([call('read', { text: 'a' }, 'a'), call('read', { text: 'b' }, 'b')]);
    expect(results.map((r) => r.id)).toEqual(['a', 'b']);
    expect(results[1]!.timing.finishedAt).toBeLessThan(results[0]!.timing.finishedAt);
  });
});

describe('output retention', () => {
  it('a default text budget cuts content with an in-band note and exact counts', async () => {
    const text = 'x'.repeat(1000);
    const [result] = await createPipeline({ tools, retention: { default: { maxChars: 100 } } }).run([call('read', { text })]);
    const json = JSON.stringify({ text });
    expect(result!.status).toBe('ok');
    expect(result!.content).toBe(`${json.slice(0, 100)}\n[... ${json.length - 100} characters omitted]`);
    expect(result!.omitted).toEqual({ items: 0, characters: json.length - 100, lines: 0 });
    expect(result!.value).toEqual({ text }); // the value is the tool's; only what the model sees is cut
  });

  it('a per-tool budget overrides the default; other tools keep the default', async () => {
    const results = await createPipeline({
      tools,
      retention: { default: { maxChars: 5 }, tools: { lines: { maxLines: 2, keep: 'head+tail' } } },
    }).run([call('lines', { n: 5 }), call('read', { text: 'abcdefgh' })]);
    expect(results[0]!.content).toBe('line 0\n[... 3 lines omitted]\nline 4\n');
    expect(results[0]!.omitted).toMatchObject({ lines: 3 });
    expect(results[1]!.content.startsWith('{"tex\n[...')).toBe(true);
  });

  it('an item budget keeps the first N items and counts the rest exactly, apart from incomplete', async () => {
    const pipeline = createPipeline({ tools, retention: { tools: { lines: { maxItems: 2 } } } });
    const [ok, broken] = await pipeline.run([call('lines', { n: 10 }, 'ok'), call('lines', { n: 10, failAt: 5 }, 'broken')]);
    expect(ok).toMatchObject({ status: 'ok', value: ['line 0\n', 'line 1\n'], omitted: { items: 8 } });
    expect(ok!.content).toBe('line 0\nline 1\n\n[... 8 more items omitted]');
    // failed midway: incomplete (the tool's state) and omitted (the budget) are separate
    expect(broken).toMatchObject({ status: 'error', incomplete: true, partial: ['line 0\n', 'line 1\n'], omitted: { items: 3 } });
  });

  it('budgets apply after post policies, so a policy sees the whole output', async () => {
    const sizes: number[] = [];
    const measure = named('measure', (ctx) => void sizes.push(ctx.content.length));
    const [result] = await createPipeline({ tools, post: [measure], retention: { default: { maxChars: 10 } } }).run([
      call('read', { text: 'y'.repeat(50) }),
    ]);
    expect(sizes).toEqual([JSON.stringify({ text: 'y'.repeat(50) }).length]);
    expect(result!.omitted?.characters).toBeGreaterThan(0);
  });

  it('budgets are validated with the pipeline', () => {
    expect(() => createPipeline({ tools, retention: { default: { maxChars: -1 } } })).toThrow(/retention.default.maxChars/);
    expect(() => createPipeline({ tools, retention: { tools: { nope: {} } } })).toThrow(/retention.tools.nope/);
  });
});

describe('policy option validation', () => {
  it('rejects non-function policies and a bad defaultDecision with precise messages', () => {
    expect(() => createPipeline({ tools, pre: [42 as never] })).toThrow(/`pre\[0\]` must be a policy function/);
    expect(() => createPipeline({ tools, post: 'x' as never })).toThrow(/`post` must be an array/);
    expect(() => createPipeline({ tools, defaultDecision: 'maybe' as never })).toThrow(/`defaultDecision` must be "allow", "ask" or "deny"/);
    expect(() => createPipeline({ tools, approve: 'yes' as never })).toThrow(/`approve` must be a function/);
    expect(() => createPipeline({ tools, approvalTimeoutMs: 0 })).toThrow(/`approvalTimeoutMs`/);
  });
});

it('a body never runs for a denied call, even with post policies that accept', async () => {
  const body = vi.fn(() => 'ran');
  const t = defineTool({ name: 't', description: 't', input: z.object({}), execute: body });
  const [result] = await createPipeline({
    tools: [t],
    defaultDecision: 'deny',
    post: [named('accepting', () => ({ kind: 'accept', value: 'ran' }))],
  }).run([call('t', {})]);
  expect(result!.status).toBe('denied');
  expect(body).not.toHaveBeenCalled();
});

it('a post chain that has not decided within policyTimeoutMs withholds an ok output (fail closed)', async () => {
  let signal: AbortSignal | undefined;
  const stuck = named('stuck', (ctx) => ((signal = ctx.signal), new Promise<undefined>(() => {})));
  const [result] = await createPipeline({ tools, post: [stuck], policyTimeoutMs: 15 }).run([call('read', { text: 'x' })]);
  expect(result!.status).toBe('error');
  expect(result!.error).toMatchObject({ code: 'policy_error', stage: 'post', policy: 'stuck' });
  expect(result!.value).toBeUndefined();
  expect(signal?.aborted).toBe(true);
});
