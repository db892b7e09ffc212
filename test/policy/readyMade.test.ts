import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  allowTools,
  askTools,
  ConfigError,
  createPipeline,
  defineTool,
  denyTools,
  type Approver,
  type PipelineOptions,
  type PrePolicy,
  type ToolCall,
  type ToolResult,
} from '../../src/index.js';
import { pathSandbox } from '../../src/node/index.js';

const root = path.join(os.tmpdir(), 'sandbox-root');

/** Asserts that `build` throws a ConfigError (a TypeError still) naming `where` and `option`. */
function expectConfigError(build: () => unknown, where: ConfigError['where'], option: string): void {
  expect(build).toThrow(TypeError);
  expect(build).toThrow(ConfigError);
  expect(build).toThrow(expect.objectContaining({ code: 'invalid_config', where, option }));
}

const readBody = vi.fn((args: { path: string }) => `read ${args.path}`);
const writeBody = vi.fn((args: { path: string; content?: string | undefined }) => `wrote ${args.path}`);
const secretBody = vi.fn((args: { path: string }) => `secret ${args.path}`);
const createIssueBody = vi.fn((args: { title: string }) => `created ${args.title}`);
const manyBody = vi.fn((args: { paths: string[] }) => args.paths.join(','));
const fetchBody = vi.fn((args: { path: string }) => `fetched ${args.path}`);
const looseBody = vi.fn((args: { path?: unknown; paths?: unknown }) => JSON.stringify(args));

const readFile = defineTool({ name: 'read_file', description: 'read', input: z.object({ path: z.string() }), execute: readBody });
const readSecret = defineTool({ name: 'read_secret', description: 'read', input: z.object({ path: z.string() }), execute: secretBody });
const writeFile = defineTool({
  name: 'write_file',
  description: 'write',
  input: z.object({ path: z.string(), content: z.string().optional() }),
  execute: writeBody,
});
const writeSecret = defineTool({ name: 'write_secret', description: 'write', input: z.object({ path: z.string() }), execute: secretBody });
const createIssue = defineTool({
  name: 'mcp__github__create_issue',
  description: 'issue',
  input: z.object({ title: z.string() }),
  execute: createIssueBody,
});
const readMany = defineTool({ name: 'read_many', description: 'read many', input: z.object({ paths: z.array(z.string()) }), execute: manyBody });
const fetchUrl = defineTool({ name: 'fetch_url', description: 'fetch', input: z.object({ path: z.string() }), execute: fetchBody });
const loose = defineTool({
  name: 'loose_file',
  description: 'accepts anything under path/paths',
  input: z.object({ path: z.unknown().optional(), paths: z.unknown().optional() }),
  execute: looseBody,
});

const tools = [readFile, readSecret, writeFile, writeSecret, createIssue, readMany, fetchUrl, loose];

async function runOne(options: Omit<PipelineOptions, 'tools'>, call: ToolCall): Promise<ToolResult> {
  const [result] = await createPipeline({ tools, ...options }).run([call]);
  return result!;
}

/** A pre policy that records the arguments it saw and passes. */
function spyPolicy(): { policy: PrePolicy; seen: unknown[] } {
  const seen: unknown[] = [];
  const policy = vi.fn<PrePolicy>((ctx) => {
    seen.push(ctx.args);
    return undefined;
  });
  return { policy, seen };
}

const call = (name: string, args: unknown, id = '1'): ToolCall => ({ id, name, args });

beforeEach(() => {
  vi.clearAllMocks();
});

describe('denyTools', () => {
  it('denies a tool matching a glob with code denied, naming the policy and a default reason naming the pattern; the body never runs', async () => {
    const result = await runOne({ pre: [denyTools(['mcp__github__*'])] }, call('mcp__github__create_issue', { title: 't' }));
    expect(result.status).toBe('denied');
    if (result.error?.code !== 'denied') throw new Error(`expected denied, got ${result.error?.code}`);
    expect(result.error.policy).toBe('denyTools(mcp__github__*)');
    expect(result.error.policy.startsWith('denyTools(')).toBe(true);
    expect(result.error.reasons).toEqual(['"mcp__github__create_issue" matches mcp__github__*']);
    expect(result.content).toContain('mcp__github__*');
    expect(result.decision).toBe('deny');
    expect(result.started).toBe(false);
    expect(createIssueBody).not.toHaveBeenCalled();
  });

  it('reports the given reason instead of the default one', async () => {
    const result = await runOne(
      { pre: [denyTools(['mcp__github__*'], 'GitHub is off limits here')] },
      call('mcp__github__create_issue', { title: 't' }),
    );
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'denied', reasons: ['GitHub is off limits here'] });
    expect(result.content).toContain('GitHub is off limits here');
    expect(createIssueBody).not.toHaveBeenCalled();
  });

  it('records the deny decision in the trace under the policy name', async () => {
    const result = await runOne({ pre: [denyTools(['mcp__github__*'])] }, call('mcp__github__create_issue', { title: 't' }));
    expect(result.trace).toContainEqual({
      stage: 'pre',
      event: 'decision',
      policy: 'denyTools(mcp__github__*)',
      decision: 'deny',
      reason: '"mcp__github__create_issue" matches mcp__github__*',
    });
  });

  it('lets a non-matching tool run', async () => {
    const result = await runOne({ pre: [denyTools(['mcp__github__*'])] }, call('read_file', { path: 'a.txt' }));
    expect(result.status).toBe('ok');
    expect(result.content).toBe('read a.txt');
    expect(readBody).toHaveBeenCalledTimes(1);
  });

  it('uses the first matching pattern of the list in the default reason', async () => {
    const result = await runOne({ pre: [denyTools(['read_*', 'read_secret'])] }, call('read_secret', { path: 'a' }));
    expect(result.error).toMatchObject({ code: 'denied', policy: 'denyTools(read_*, read_secret)', reasons: ['"read_secret" matches read_*'] });
  });

  it('short-circuits: a policy after it is not called for the denied call, but is for an allowed one', async () => {
    const { policy } = spyPolicy();
    const pipeline = createPipeline({ tools, pre: [denyTools(['mcp__github__*']), policy] });
    const [denied, allowed] = await pipeline.run([call('mcp__github__create_issue', { title: 't' }, '1'), call('read_file', { path: 'a' }, '2')]);
    expect(denied!.status).toBe('denied');
    expect(allowed!.status).toBe('ok');
    expect(policy).toHaveBeenCalledTimes(1);
    expect(vi.mocked(policy).mock.calls[0]![0].call.name).toBe('read_file');
  });

  it('throws a ConfigError (a TypeError) at construction for an empty pattern, naming it', () => {
    expectConfigError(() => denyTools(['']), 'denyTools', 'patterns[0]');
    expect(() => denyTools([''])).toThrow('denyTools: `patterns[0]` must be a non-empty glob string; received ""');
  });

  it('throws a ConfigError (a TypeError) at construction for a non-string pattern, naming it', () => {
    expectConfigError(() => denyTools([42 as unknown as string]), 'denyTools', 'patterns[0]');
  });
});

describe('askTools', () => {
  it('asks the approver for a matching tool with the call, tool, effective args and reasons; allowed-once runs it', async () => {
    const approve = vi.fn<Approver>(async () => 'allowed-once');
    const result = await runOne({ pre: [askTools(['write_*'])], approve }, call('write_file', '{"path":"a.txt"}'));
    expect(result.status).toBe('ok');
    expect(result.decision).toBe('ask');
    expect(writeBody).toHaveBeenCalledTimes(1);
    expect(approve).toHaveBeenCalledTimes(1);
    const [request, signal] = approve.mock.calls[0]!;
    expect(request.call).toEqual({ id: '1', name: 'write_file', args: '{"path":"a.txt"}' });
    expect(request.tool).toBe(writeFile);
    expect(request.args).toEqual({ path: 'a.txt' });
    expect(request.index).toBe(0);
    expect(request.reasons).toEqual(['"write_file" matches write_*']);
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(result.trace).toContainEqual({ stage: 'approval', event: 'answer', answer: 'allowed-once' });
  });

  it('gives the approver its own reason when one is passed', async () => {
    const approve = vi.fn<Approver>(async () => 'allowed-once');
    await runOne({ pre: [askTools(['write_*'], 'writes to disk')], approve }, call('write_file', { path: 'a' }));
    expect(approve.mock.calls[0]![0].reasons).toEqual(['writes to disk']);
  });

  it('shows the approver the arguments as rewritten by later policies (what the body will receive)', async () => {
    const approve = vi.fn<Approver>(async () => 'allowed-once');
    const result = await runOne({ pre: [askTools(['write_*']), pathSandbox({ root })], approve }, call('write_file', { path: 'notes/a.md' }));
    expect(approve.mock.calls[0]![0].args).toEqual({ path: path.join(root, 'notes/a.md') });
    expect(approve.mock.calls[0]![0].call.args).toEqual({ path: 'notes/a.md' });
    expect(result.status).toBe('ok');
    expect(writeBody).toHaveBeenCalledWith({ path: path.join(root, 'notes/a.md') }, expect.anything());
  });

  it('a rejected approval denies with approval_rejected carrying the reasons; the body never runs', async () => {
    const approve = vi.fn<Approver>(async () => 'rejected' as const);
    const result = await runOne({ pre: [askTools(['write_*'])], approve }, call('write_file', { path: 'a' }));
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'approval_rejected', reasons: ['"write_file" matches write_*'] });
    expect(result.trace).toContainEqual({ stage: 'approval', event: 'answer', answer: 'approval_rejected' });
    expect(result.started).toBe(false);
    expect(writeBody).not.toHaveBeenCalled();
  });

  it('asks again for every call: one approval admits one call only', async () => {
    const approve = vi.fn<Approver>().mockResolvedValueOnce('allowed-once').mockResolvedValueOnce('rejected');
    const pipeline = createPipeline({ tools, pre: [askTools(['write_*'])], approve });
    const [first, second] = await pipeline.run([call('write_file', { path: 'a' }, '1'), call('write_file', { path: 'b' }, '2')]);
    expect(first!.status).toBe('ok');
    expect(second!.error?.code).toBe('approval_rejected');
    expect(approve).toHaveBeenCalledTimes(2);
    expect(writeBody).toHaveBeenCalledTimes(1);
  });

  it('never overrides a later deny: write_secret is denied by denyTools without the approver being asked', async () => {
    const approve = vi.fn<Approver>(async () => 'allowed-once');
    const result = await runOne({ pre: [askTools(['write_*']), denyTools(['write_secret'])], approve }, call('write_secret', { path: 'a' }));
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'denied', policy: 'denyTools(write_secret)' });
    expect(approve).not.toHaveBeenCalled();
    expect(secretBody).not.toHaveBeenCalled();
  });

  it('still asks for a matching tool the later deny list does not cover', async () => {
    const approve = vi.fn<Approver>(async () => 'allowed-once');
    const result = await runOne({ pre: [askTools(['write_*']), denyTools(['write_secret'])], approve }, call('write_file', { path: 'a' }));
    expect(result.status).toBe('ok');
    expect(approve).toHaveBeenCalledTimes(1);
  });

  it('passes a non-matching tool to the rest of the chain without asking', async () => {
    const approve = vi.fn<Approver>(async () => 'rejected');
    const { policy } = spyPolicy();
    const result = await runOne({ pre: [askTools(['write_*']), policy], approve }, call('read_file', { path: 'a' }));
    expect(result.status).toBe('ok');
    expect(result.decision).toBe('allow');
    expect(policy).toHaveBeenCalledTimes(1);
    expect(approve).not.toHaveBeenCalled();
    expect(readBody).toHaveBeenCalledTimes(1);
  });

  it('lets a later deny decide a non-matching tool', async () => {
    const approve = vi.fn<Approver>(async () => 'allowed-once');
    const result = await runOne({ pre: [askTools(['write_*']), denyTools(['read_secret'])], approve }, call('read_secret', { path: 'a' }));
    expect(result.error).toMatchObject({ code: 'denied', policy: 'denyTools(read_secret)' });
    expect(approve).not.toHaveBeenCalled();
  });

  it('without an approver a matching tool is denied with approval_unavailable', async () => {
    const result = await runOne({ pre: [askTools(['write_*'])] }, call('write_file', { path: 'a' }));
    expect(result.status).toBe('denied');
    expect(result.error?.code).toBe('approval_unavailable');
    expect(writeBody).not.toHaveBeenCalled();
  });

  it('throws a ConfigError (a TypeError) at construction for an empty pattern, naming it', () => {
    expectConfigError(() => askTools(['write_*', '']), 'askTools', 'patterns[1]');
    expect(() => askTools(['write_*', ''])).toThrow('askTools: `patterns[1]` must be a non-empty glob string; received ""');
  });

  it('throws a ConfigError (a TypeError) at construction for a non-string pattern, naming it', () => {
    expectConfigError(() => askTools([null as unknown as string]), 'askTools', 'patterns[0]');
  });
});

describe('allowTools', () => {
  it('exempts matching tools from defaultDecision ask; other tools without an approver get approval_unavailable', async () => {
    const pipeline = createPipeline({ tools, defaultDecision: 'ask', pre: [allowTools(['read_*'])] });
    const [read, write] = await pipeline.run([call('read_file', { path: 'a' }, '1'), call('write_file', { path: 'b' }, '2')]);
    expect(read!.status).toBe('ok');
    expect(read!.decision).toBe('allow');
    expect(readBody).toHaveBeenCalledTimes(1);
    expect(write!.status).toBe('denied');
    expect(write!.error?.code).toBe('approval_unavailable');
    expect(writeBody).not.toHaveBeenCalled();
  });

  it('records the allow decision with its default reason in the trace', async () => {
    const result = await runOne({ defaultDecision: 'ask', pre: [allowTools(['read_*'])] }, call('read_file', { path: 'a' }));
    expect(result.trace).toContainEqual({
      stage: 'pre',
      event: 'decision',
      policy: 'allowTools(read_*)',
      decision: 'allow',
      reason: '"read_file" matches read_*',
    });
  });

  it('placed after denyTools, the deny still wins for a tool both match', async () => {
    const pipeline = createPipeline({ tools, defaultDecision: 'ask', pre: [denyTools(['read_secret']), allowTools(['read_*'])] });
    const [secret, read] = await pipeline.run([call('read_secret', { path: 'a' }, '1'), call('read_file', { path: 'b' }, '2')]);
    expect(secret!.status).toBe('denied');
    expect(secret!.error).toMatchObject({ code: 'denied', policy: 'denyTools(read_secret)' });
    expect(secretBody).not.toHaveBeenCalled();
    expect(read!.status).toBe('ok');
  });

  it('placed first, it short-circuits later policies: a later denyTools never runs for a matching tool', async () => {
    const { policy } = spyPolicy();
    const result = await runOne({ pre: [allowTools(['read_*']), policy, denyTools(['read_secret'])] }, call('read_secret', { path: 'a' }));
    expect(result.status).toBe('ok');
    expect(result.decision).toBe('allow');
    expect(secretBody).toHaveBeenCalledTimes(1);
    expect(policy).not.toHaveBeenCalled();
    expect(result.trace.some((entry) => 'policy' in entry && entry.policy.startsWith('denyTools('))).toBe(false);
  });

  it('passes a non-matching tool on to the later policies', async () => {
    const result = await runOne({ pre: [allowTools(['read_*']), denyTools(['write_*'])] }, call('write_file', { path: 'a' }));
    expect(result.error).toMatchObject({ code: 'denied', policy: 'denyTools(write_*)' });
  });

  it('throws a ConfigError (a TypeError) at construction for an empty pattern, naming it', () => {
    expectConfigError(() => allowTools(['']), 'allowTools', 'patterns[0]');
    expect(() => allowTools([''])).toThrow('allowTools: `patterns[0]` must be a non-empty glob string; received ""');
  });

  it('throws a ConfigError (a TypeError) at construction for a non-string pattern, naming it', () => {
    expectConfigError(() => allowTools([{} as unknown as string]), 'allowTools', 'patterns[0]');
  });
});

describe('pathSandbox', () => {
  const sandboxName = `pathSandbox(${path.resolve(root)})`;

  it('rewrites a relative path inside the root to its absolute form for the body, keeping the original in originalArgs', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_file', { path: 'notes/a.md' }));
    const absolute = path.join(root, 'notes/a.md');
    expect(result.status).toBe('ok');
    expect(readBody).toHaveBeenCalledWith({ path: absolute }, expect.anything());
    expect(result.args).toEqual({ path: absolute });
    expect(result.originalArgs).toEqual({ path: 'notes/a.md' });
    expect(result.rewrittenBy).toEqual([sandboxName]);
    expect(result.rewrittenBy[0]!.startsWith('pathSandbox(')).toBe(true);
    expect(result.trace).toContainEqual({ stage: 'pre', event: 'rewrite', policy: sandboxName });
  });

  it('normalises a path that wanders out and back in (src/../README.md)', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_file', { path: 'src/../README.md' }));
    expect(result.status).toBe('ok');
    expect(result.args).toEqual({ path: path.join(root, 'README.md') });
  });

  it('denies a relative path escaping the root (../x) with a reason naming the root; the body never runs', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_file', { path: '../x' }));
    expect(result.status).toBe('denied');
    if (result.error?.code !== 'denied') throw new Error(`expected denied, got ${result.error?.code}`);
    expect(result.error.policy).toBe(sandboxName);
    expect(result.error.reasons).toHaveLength(1);
    expect(result.error.reasons[0]).toContain(path.resolve(root));
    expect(result.error.reasons[0]).toContain('../x');
    expect(result.content).toContain(path.resolve(root));
    expect(readBody).not.toHaveBeenCalled();
  });

  it('denies an absolute path outside the root (/etc/passwd)', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_file', { path: '/etc/passwd' }));
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'denied', policy: sandboxName });
    expect((result.error as { reasons: readonly string[] }).reasons[0]).toContain(path.resolve(root));
    expect(readBody).not.toHaveBeenCalled();
  });

  it('denies a sibling directory that merely shares the root as a name prefix', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_file', { path: `${root}-evil/x` }));
    expect(result.status).toBe('denied');
    expect(readBody).not.toHaveBeenCalled();
  });

  it('denies a path holding a NUL byte', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_file', { path: 'a.txt\0../../etc/passwd' }));
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'denied', policy: sandboxName });
    expect(readBody).not.toHaveBeenCalled();
  });

  it('runs an already absolute path inside the root without a rewrite', async () => {
    const absolute = path.join(root, 'a.txt');
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_file', { path: absolute }));
    expect(result.status).toBe('ok');
    expect(result.args).toEqual({ path: absolute });
    expect(result.originalArgs).toEqual({ path: absolute });
    expect(result.rewrittenBy).toEqual([]);
    expect(result.trace.some((entry) => entry.event === 'rewrite')).toBe(false);
    expect(readBody).toHaveBeenCalledWith({ path: absolute }, expect.anything());
  });

  it('accepts the root itself', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_file', { path: '.' }));
    expect(result.status).toBe('ok');
    expect(result.args).toEqual({ path: path.resolve(root) });
  });

  it('rewrites every entry of a paths array when all are inside', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_many', { paths: ['a.txt', path.join(root, 'b.txt'), 'c/d.txt'] }));
    const expected = [path.join(root, 'a.txt'), path.join(root, 'b.txt'), path.join(root, 'c/d.txt')];
    expect(result.status).toBe('ok');
    expect(result.args).toEqual({ paths: expected });
    expect(result.originalArgs).toEqual({ paths: ['a.txt', path.join(root, 'b.txt'), 'c/d.txt'] });
    expect(result.rewrittenBy).toEqual([sandboxName]);
    expect(manyBody).toHaveBeenCalledWith({ paths: expected }, expect.anything());
  });

  it('denies a paths array when one entry is outside', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('read_many', { paths: ['a.txt', '../../etc/shadow', 'b.txt'] }));
    expect(result.status).toBe('denied');
    expect((result.error as { reasons: readonly string[] }).reasons[0]).toContain('../../etc/shadow');
    expect(manyBody).not.toHaveBeenCalled();
  });

  it('leaves tools outside its tools option untouched, even with a path outside the root', async () => {
    const pre = [pathSandbox({ root, tools: ['*_file'] })];
    const pipeline = createPipeline({ tools, pre });
    const [fetched, read] = await pipeline.run([call('fetch_url', { path: '../x' }, '1'), call('read_file', { path: '../x' }, '2')]);
    expect(fetched!.status).toBe('ok');
    expect(fetched!.args).toEqual({ path: '../x' });
    expect(fetched!.rewrittenBy).toEqual([]);
    expect(fetchBody).toHaveBeenCalledWith({ path: '../x' }, expect.anything());
    expect(read!.status).toBe('denied');
  });

  it('checks only the configured keys', async () => {
    const result = await runOne({ pre: [pathSandbox({ root, keys: ['paths'] })] }, call('read_file', { path: '../x' }));
    expect(result.status).toBe('ok');
    expect(result.args).toEqual({ path: '../x' });
  });

  it('a non-string path rejected by the tool schema fails at intake as invalid_args before the sandbox sees it', async () => {
    const { policy } = spyPolicy();
    const result = await runOne({ pre: [policy, pathSandbox({ root })] }, call('read_file', { path: 42 }));
    expect(result.status).toBe('error');
    expect(result.error?.code).toBe('invalid_args');
    expect(policy).not.toHaveBeenCalled();
    expect(readBody).not.toHaveBeenCalled();
  });

  it('denies with "must hold paths" when a schema-permitted paths array holds a non-string', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, call('loose_file', { paths: ['a.txt', 42] }));
    expect(result.status).toBe('denied');
    expect(result.error).toMatchObject({ code: 'denied', policy: sandboxName, reasons: ['"paths[1]" must hold paths'] }); // where exactly
    expect(looseBody).not.toHaveBeenCalled();
  });

  it('denies a sandboxed key holding an object: fs would take a URL-like object as a file URL', async () => {
    looseBody.mockClear();
    const urlLike = { href: 'x', protocol: 'file:', hostname: '', pathname: '/etc/passwd' };
    for (const value of [urlLike, 42]) {
      const result = await runOne({ pre: [pathSandbox({ root })] }, { id: '1', name: 'loose_file', args: { path: value } });
      expect(result.error?.code).toBe('denied');
      expect(result.content).toContain('"path" must hold paths');
    }
    expect(looseBody).not.toHaveBeenCalled();
  });

  it('accepts names that merely start with two dots (..foo is inside the root)', async () => {
    const result = await runOne({ pre: [pathSandbox({ root })] }, { id: '1', name: 'read_file', args: { path: '..foo' } });
    expect(result.status).toBe('ok');
    expect(result.args).toEqual({ path: path.join(root, '..foo') });
  });

  it('rewrites in the input form, so tools with transforms on other fields stay sandboxable', async () => {
    const body = vi.fn((args: { path: string; n?: number | undefined }) => args);
    const tool = defineTool({
      name: 'read_n',
      description: 'read',
      input: z.object({ path: z.string(), n: z.string().transform(Number).optional() }),
      execute: body,
    });
    const [result] = await createPipeline({ tools: [tool], pre: [pathSandbox({ root })] }).run([
      { id: '1', name: 'read_n', args: { path: 'a', n: '3' } },
    ]);
    expect(result!.status).toBe('ok');
    expect(body).toHaveBeenCalledWith({ path: path.join(root, 'a'), n: 3 }, expect.anything());
  });

  it('rejects a pattern list given as a string instead of splitting it into characters', () => {
    expectConfigError(() => allowTools('x*' as never), 'allowTools', 'patterns');
    expectConfigError(() => pathSandbox({ root, tools: 'read_file' as never }), 'pathSandbox', 'tools');
  });

  it('a later policy sees the rewritten args in ctx.args', async () => {
    const { policy, seen } = spyPolicy();
    const result = await runOne({ pre: [pathSandbox({ root }), policy] }, call('read_file', { path: 'a.txt' }));
    expect(seen).toEqual([{ path: path.join(root, 'a.txt') }]);
    expect(result.status).toBe('ok');
  });

  it('an earlier policy sees the original args (the rewrite happens further down the chain)', async () => {
    const { policy, seen } = spyPolicy();
    await runOne({ pre: [policy, pathSandbox({ root })] }, call('read_file', { path: 'a.txt' }));
    expect(seen).toEqual([{ path: 'a.txt' }]);
  });

  it('short-circuits on denial: a later policy is not called', async () => {
    const { policy } = spyPolicy();
    await runOne({ pre: [pathSandbox({ root }), policy] }, call('read_file', { path: '/etc/passwd' }));
    expect(policy).not.toHaveBeenCalled();
  });

  it('throws a ConfigError (a TypeError) for an empty root', () => {
    expectConfigError(() => pathSandbox({ root: '' }), 'pathSandbox', 'root');
    expect(() => pathSandbox({ root: '' })).toThrow('pathSandbox: `root` must be a non-empty path; received ""');
  });

  it('throws a ConfigError (a TypeError) for a non-string root', () => {
    expectConfigError(() => pathSandbox({ root: 42 as unknown as string }), 'pathSandbox', 'root');
    expectConfigError(() => pathSandbox(undefined as never), 'pathSandbox', 'options');
  });

  it('throws a ConfigError (a TypeError) for keys that are not an array of strings, naming the bad one', () => {
    expectConfigError(() => pathSandbox({ root, keys: ['path', 1 as unknown as string] }), 'pathSandbox', 'keys[1]');
    expectConfigError(() => pathSandbox({ root, keys: 'path' as unknown as string[] }), 'pathSandbox', 'keys');
  });

  it('throws a ConfigError (a TypeError) for an empty tools glob', () => {
    expectConfigError(() => pathSandbox({ root, tools: [''] }), 'pathSandbox', 'tools[0]');
    expect(() => pathSandbox({ root, tools: [''] })).toThrow('pathSandbox: `tools[0]` must be a non-empty glob string; received ""');
  });
});

it('pathSandbox also checks what the body receives: a schema default outside the root is denied', async () => {
  const body = vi.fn(() => 'listed');
  const list = defineTool({ name: 'list_dir', description: 'l', input: z.object({ cwd: z.string().default('/etc') }), execute: body });
  const [result] = await createPipeline({ tools: [list], pre: [pathSandbox({ root })] }).run([{ id: '1', name: 'list_dir', args: {} }]);
  expect(result!.status).toBe('denied');
  expect(result!.content).toContain('"cwd" ("/etc") is outside');
  expect(body).not.toHaveBeenCalled();
});
