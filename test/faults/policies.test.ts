import { from } from 'rxjs';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type Approver, type PipelineOptions, type PostPolicy, type PrePolicy, type ToolCall, type ToolResult } from '../../src/index.js';
import { collectUnhandled, expectOneEach, HUNG, never, outline, record, sleep, within } from './helpers.js';

const ran: string[] = [];
beforeEach(() => void (ran.length = 0));
const tool = (name: string, mode: 'parallel' | 'exclusive', fail = false) =>
  defineTool({
    name,
    description: name,
    input: z.object({ tag: z.string() }),
    mode,
    onError: 'continue',
    execute: async ({ tag }) => {
      ran.push(tag);
      if (fail) throw new Error('disk gone');
      return tag;
    },
  });
const tools = [tool('t', 'parallel'), tool('x', 'exclusive'), tool('fail', 'parallel', true)];
const call = (tag: string, name = 't'): ToolCall => ({ id: tag, name, args: { tag } });
/** The faulty call, then a parallel and an exclusive call that must still run. */
const CALLS = [call('bad'), call('after1'), call('after2', 'x')];
const IDS = ['bad', 'after1', 'after2'];
const run = (options: Omit<PipelineOptions, 'tools'>, calls = CALLS) => createPipeline({ tools, ...options }).run(calls);

const named = <P extends PrePolicy | PostPolicy>(name: string, policy: P): P => Object.defineProperty(policy, 'name', { value: name });
/** A pre policy that applies `fault` to the call `bad` only. */
const preOnBad = (fault: PrePolicy): PrePolicy => named('faulty', (ctx, next) => (ctx.call.id === 'bad' ? fault(ctx, next) : undefined));
/** A post policy that applies `fault` to the result of `bad` only. */
const postOnBad = (fault: PostPolicy): PostPolicy => named('faulty', (ctx, next) => (ctx.call.id === 'bad' ? fault(ctx, next) : undefined));

function expectBadDenied(results: readonly ToolResult[] | typeof HUNG, code = 'policy_error'): asserts results is readonly ToolResult[] {
  expectOneEach(results, IDS);
  expect(outline(results)).toEqual([['bad', 'denied', code], ['after1', 'ok', undefined], ['after2', 'ok', undefined]]);
  expect(ran).not.toContain('bad');
}
function expectBadWithheld(results: readonly ToolResult[] | typeof HUNG): asserts results is readonly ToolResult[] {
  expectOneEach(results, IDS);
  expect(outline(results)).toEqual([['bad', 'error', 'policy_error'], ['after1', 'ok', undefined], ['after2', 'ok', undefined]]);
  expect(results[0]).toMatchObject({ error: { stage: 'post', policy: 'faulty' } });
  expect(results[0]!.value).toBeUndefined();
  expect(results[0]!.content).toMatch(/^The output of "t" was withheld: post-execute policy "faulty" /);
}

/** Garbage a policy or an approver may hand back. */
const GARBAGE: [string, unknown][] = [
  ['a number', 42],
  ['a bare string', 'allow'],
  ['null', null],
  ['an unknown decision', { decision: 'maybe', kind: 'maybe' }],
  ['an array', []],
  ['a function', () => 'allow'],
  ['a Symbol', Symbol('allow')],
];
const hostileObject = () => ({ get decision(): never { throw new Error('hostile getter'); }, get kind(): never { throw new Error('hostile getter'); } });
const revokedProxy = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
const THROWS: [string, () => unknown][] = [
  ['throws an Error', () => { throw new Error('scanner down'); }],
  ['rejects', () => Promise.reject(new Error('scanner down'))],
  ['throws a Symbol', () => { throw Symbol('scanner down'); }],
  ['throws undefined', () => { throw undefined; }],
];

describe('pre-execute policies that misbehave fail closed; the other calls go on', () => {
  it.each(THROWS)('a policy that %s → denied, policy_error', async (_label, fault) => {
    const results = await run({ pre: [preOnBad(fault as PrePolicy)] });
    expectBadDenied(results);
    expect(results[0]).toMatchObject({ decision: 'deny', error: { stage: 'pre', policy: 'faulty' } });
    expect(results[0]!.content).toMatch(/^Denied: pre-execute policy "faulty" threw: .+ \(policies fail closed\)\.$/);
  });

  it.each(GARBAGE)('a policy that returns %s → denied, policy_error', async (_label, garbage) => {
    const results = await run({ pre: [preOnBad(() => garbage as never)] });
    expectBadDenied(results);
    expect(results[0]!.content).toMatch(/^Denied: pre-execute policy "faulty" returned .+, which is not a decision/);
  });

  it('a policy that returns a revoked Proxy → denied, policy_error (awaiting it throws)', async () => {
    const results = await run({ pre: [preOnBad(() => revokedProxy() as never)] });
    expectBadDenied(results);
    expect(results[0]!.content).toMatch(/^Denied: pre-execute policy "faulty" threw: Cannot perform '\w+' on a proxy that has been revoked/);
  });

  it('a policy that returns an object whose getters throw → denied at once, policy_error; no unhandled rejection', async () => {
    const make = hostileObject;
    const approve = vi.fn<Approver>(async () => 'allowed-once');
    const { value: results, unhandled } = await collectUnhandled(() =>
      within(run({ pre: [preOnBad(() => make() as never)], approve, policyTimeoutMs: 1000 }), 200),
    );
    expectBadDenied(results);
    expect(results[0]!.content).not.toMatch(/did not decide/);
    expect(approve).not.toHaveBeenCalled();
    expect(unhandled).toEqual([]);
  });

  it('next() twice rejects: uncaught it fails the policy; caught, the chain goes on; the rest runs once', async () => {
    const inner = vi.fn<PrePolicy>(() => undefined);
    const uncaught = await run({ pre: [preOnBad(async (_ctx, next) => (await next(), next())), named('inner', inner)] });
    expectBadDenied(uncaught);
    expect(uncaught[0]!.content).toContain('next() called twice in pre-execute policy "faulty"');

    const atOnce = await run({ pre: [preOnBad((_ctx, next) => (void next(), next())), named('inner', inner)] });
    expectBadDenied(atOnce);

    inner.mockClear();
    const caught = await run({ pre: [preOnBad(async (_ctx, next) => { const first = await next(); await next().catch(() => undefined); return first; }), named('inner', inner)] });
    expectOneEach(caught, IDS);
    expect(outline(caught)).toEqual([['bad', 'ok', undefined], ['after1', 'ok', undefined], ['after2', 'ok', undefined]]);
    expect(inner).toHaveBeenCalledTimes(3); // once per call, never twice for `bad`
  });

  it.each([
    ['never settles', () => never()],
    ['calls next() and then never settles', (_ctx: unknown, next: () => Promise<unknown>) => (void next(), never())],
  ])('a policy that %s → denied after policyTimeoutMs (policy_error), its signal aborts; the barrier behind it runs', async (_label, fault) => {
    let signal: AbortSignal | undefined;
    const pre = preOnBad((ctx, next) => ((signal = ctx.signal), (fault as PrePolicy)(ctx, next)));
    const results = await run({ pre: [pre], policyTimeoutMs: 20 });
    expectBadDenied(results);
    expect(results[0]!.content).toBe('Denied: pre-execute policy "faulty" did not decide within 20 ms (policies fail closed).');
    expect(signal?.aborted).toBe(true);
  });
});

describe('post-execute policies that misbehave fail closed; the other calls go on', () => {
  it.each(THROWS)('a policy that %s → an ok result becomes policy_error, its output withheld', async (_label, fault) => {
    expectBadWithheld(await run({ post: [postOnBad(fault as PostPolicy)] }));
  });

  it.each(GARBAGE)('a policy that returns %s → policy_error, output withheld', async (_label, garbage) => {
    const results = await run({ post: [postOnBad(() => garbage as never)] });
    expectBadWithheld(results);
    expect(results[0]!.content).toMatch(/returned .+, which is not a decision/);
  });

  it('a throwing policy leaves failed and denied results as they were', async () => {
    const throwing = named('throwing', () => { throw new Error('scanner down'); }) as PostPolicy;
    const denyBad = named('denyBad', (ctx) => (ctx.call.id === 'bad' ? { decision: 'deny' as const } : undefined)) as PrePolicy;
    const results = await run({ pre: [denyBad], post: [throwing] }, [call('bad'), call('broken', 'fail'), call('fine')]);
    expectOneEach(results, ['bad', 'broken', 'fine']);
    expect(outline(results)).toEqual([['bad', 'denied', 'denied'], ['broken', 'error', 'tool_error'], ['fine', 'error', 'policy_error']]);
  });

  it('a policy that returns a revoked Proxy → policy_error, output withheld', async () => {
    expectBadWithheld(await run({ post: [postOnBad(() => revokedProxy() as never)] }));
  });

  it('a policy that returns an object whose getters throw → policy_error at once; no unhandled rejection', async () => {
    const make = hostileObject;
    const { value: results, unhandled } = await collectUnhandled(() =>
      within(run({ post: [postOnBad(() => make() as never)], policyTimeoutMs: 1000 }), 200),
    );
    expectBadWithheld(results);
    expect(results[0]!.content).not.toMatch(/did not decide/);
    expect(unhandled).toEqual([]);
  });

  it('a policy that never settles → policy_error after policyTimeoutMs; its signal aborts', async () => {
    let signal: AbortSignal | undefined;
    const results = await run({ post: [postOnBad((ctx) => ((signal = ctx.signal), never()))], policyTimeoutMs: 20 });
    expectBadWithheld(results);
    expect(results[0]!.content).toContain('"faulty" did not decide within 20 ms');
    expect(signal?.aborted).toBe(true);
  });
});

describe('approvers that misbehave deny (fail closed); the other calls go on', () => {
  const askBad = preOnBad(() => ({ decision: 'ask', reason: 'needs a human' }));

  it.each([
    ['throws synchronously', 'approval_error', () => { throw new Error('ui crashed'); }, 'the approver failed: ui crashed'],
    ['rejects', 'approval_error', () => Promise.reject(new Error('ui crashed')), 'the approver failed: ui crashed'],
    ['rejects with a Symbol', 'approval_error', () => Promise.reject(Symbol('x')), 'the approver failed: a symbol'],
    ['returns a revoked Proxy', 'approval_error', () => revokedProxy(), 'the approver failed: '],
    ...GARBAGE.map(([label, garbage]): [string, string, () => unknown, string] => [`answers ${label}`, 'approval_invalid', async () => garbage, 'the approver answered ']),
    ['answers "ALLOWED-ONCE"', 'approval_invalid', async () => 'ALLOWED-ONCE', 'the approver answered "ALLOWED-ONCE"'],
  ])('an approver that %s → denied (%s)', async (_label, code, approve, text) => {
    const results = await run({ pre: [askBad], approve: approve as Approver });
    expectBadDenied(results, code);
    expect(results[0]!.content).toContain(text);
    expect(results[0]!.error).toMatchObject({ reasons: ['needs a human'] });
  });

  it('an approver that never answers → approval_timeout, its signal aborts; a late answer changes nothing', async () => {
    let signal: AbortSignal | undefined;
    const approve: Approver = async (_request, s) => ((signal = s), await sleep(40), 'allowed-once');
    const pipeline = createPipeline({ tools, pre: [askBad], approve, approvalTimeoutMs: 10 });
    const recording = record(from(CALLS).pipe(pipeline.operator()));
    expect(await recording.done).toBe('complete');
    expectBadDenied(recording.results, 'approval_timeout');
    expect(recording.results[0]!.content).toBe('Denied: calling "t" needs approval, and no answer came within 10 ms.');
    expect(signal?.aborted).toBe(true);
    await sleep(50);
    expect(recording.events).toEqual(['bad:denied', 'after1:ok', 'after2:ok', 'complete']);
    expect(ran).not.toContain('bad');
  });
});
