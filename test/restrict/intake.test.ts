import { beforeEach, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  ConfigError,
  createPipeline,
  defineTool,
  RestrictionSet,
  type PipelineOptions,
  type PrePolicy,
  type ToolCall,
  type ToolResult,
} from '../../src/index.js';

const getIssueBody = vi.fn((args: { n: number }) => `issue ${args.n}`);
const deleteRepoBody = vi.fn((args: { repo: string }) => `deleted ${args.repo}`);
const bashBody = vi.fn((args: { cmd: string }) => `ran ${args.cmd}`);
const readBody = vi.fn((args: { path: string }) => `read ${args.path}`);
const writeBody = vi.fn((args: { path: string }) => `wrote ${args.path}`);

const getIssue = defineTool({ name: 'mcp__github__get_issue', description: 'get', input: z.object({ n: z.number() }), execute: getIssueBody });
const deleteRepo = defineTool({
  name: 'mcp__github__delete_repo',
  description: 'delete',
  input: z.object({ repo: z.string() }),
  execute: deleteRepoBody,
});
const bash = defineTool({ name: 'bash', description: 'shell', input: z.object({ cmd: z.string() }), execute: bashBody });
const readFile = defineTool({ name: 'read_file', description: 'read', input: z.object({ path: z.string() }), execute: readBody });
const writeFile = defineTool({ name: 'write_file', description: 'write', input: z.object({ path: z.string() }), execute: writeBody });

const tools = [getIssue, deleteRepo, bash, readFile, writeFile];

const hostAndAgent = new RestrictionSet([
  { scope: 'host', deny: ['mcp__*'] },
  { scope: 'agent', allow: ['mcp__github__get_*'] },
]);

async function runOne(options: Omit<PipelineOptions, 'tools'>, call: ToolCall): Promise<ToolResult> {
  const [result] = await createPipeline({ tools, ...options }).run([call]);
  return result!;
}

beforeEach(() => {
  vi.clearAllMocks();
});

it('runs a host-denied tool that a nearer agent layer allows', async () => {
  const result = await runOne({ restrictions: hostAndAgent }, { id: '1', name: 'mcp__github__get_issue', args: { n: 7 } });
  expect(result.status).toBe('ok');
  expect(result.content).toBe('issue 7');
  expect(getIssueBody).toHaveBeenCalledTimes(1);
});

it('denies a host-denied tool the agent layer does not allow with code restricted, naming the deciding scope and pattern; the body never runs', async () => {
  const result = await runOne({ restrictions: hostAndAgent }, { id: '1', name: 'mcp__github__delete_repo', args: { repo: 'x' } });
  expect(result.status).toBe('denied');
  expect(result.error).toMatchObject({ code: 'restricted', scope: 'host', pattern: 'mcp__*' });
  expect(result.started).toBe(false);
  expect(result.decision).toBeUndefined();
  expect(deleteRepoBody).not.toHaveBeenCalled();
});

it('denies a tool denied in both host and a nearer scope, reporting the nearer scope as the decider', async () => {
  const restrictions = new RestrictionSet([
    { scope: 'host', deny: ['bash'] },
    { scope: 'sub', deny: ['ba*'] },
  ]);
  const result = await runOne({ restrictions }, { id: '1', name: 'bash', args: { cmd: 'ls' } });
  expect(result.status).toBe('denied');
  expect(result.error).toMatchObject({ code: 'restricted', scope: 'sub', pattern: 'ba*' });
  expect(bashBody).not.toHaveBeenCalled();
});

it('a nearer deny beats a host-level allow', async () => {
  const restrictions = new RestrictionSet([
    { scope: 'host', allow: ['bash'] },
    { scope: 'sub', deny: ['bash'] },
  ]);
  const result = await runOne({ restrictions }, { id: '1', name: 'bash', args: { cmd: 'ls' } });
  expect(result.error).toMatchObject({ code: 'restricted', scope: 'sub', pattern: 'bash' });
});

it('runs a tool no layer mentions', async () => {
  const result = await runOne({ restrictions: hostAndAgent }, { id: '1', name: 'read_file', args: { path: 'a' } });
  expect(result.status).toBe('ok');
  expect(readBody).toHaveBeenCalledTimes(1);
});

it('restricts before parsing: a restricted call with invalid JSON args is restricted, not invalid_json', async () => {
  const result = await runOne({ restrictions: hostAndAgent }, { id: '1', name: 'mcp__github__delete_repo', args: '{"repo": ' });
  expect(result.status).toBe('denied');
  expect(result.error?.code).toBe('restricted');
});

it('a restricted call never reaches the pre-execute policies', async () => {
  const policy = vi.fn<PrePolicy>(() => undefined);
  const result = await runOne({ restrictions: hostAndAgent, pre: [policy] }, { id: '1', name: 'mcp__github__delete_repo', args: { repo: 'x' } });
  expect(result.error?.code).toBe('restricted');
  expect(policy).not.toHaveBeenCalled();
  expect(result.trace).toEqual([]);
});

it('restricts only the matching calls of a mixed batch, keeping input order', async () => {
  const pipeline = createPipeline({ tools, restrictions: hostAndAgent });
  const results = await pipeline.run([
    { id: 'a', name: 'mcp__github__delete_repo', args: { repo: 'x' } },
    { id: 'b', name: 'mcp__github__get_issue', args: { n: 1 } },
    { id: 'c', name: 'read_file', args: { path: 'p' } },
  ]);
  expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
    ['a', 'denied', 'restricted'],
    ['b', 'ok', undefined],
    ['c', 'ok', undefined],
  ]);
});

it('extend(): a pipeline with the child set restricts write_file while a pipeline with the parent does not', async () => {
  const parent = new RestrictionSet([{ scope: 'host', deny: ['bash'] }]);
  const child = parent.extend({ scope: 'sub', deny: ['write_*'] });
  const call: ToolCall = { id: '1', name: 'write_file', args: { path: 'a' } };

  const [viaChild] = await createPipeline({ tools, restrictions: child }).run([call]);
  expect(viaChild!.status).toBe('denied');
  expect(viaChild!.error).toMatchObject({ code: 'restricted', scope: 'sub', pattern: 'write_*' });
  expect(writeBody).not.toHaveBeenCalled();

  const [viaParent] = await createPipeline({ tools, restrictions: parent }).run([call]);
  expect(viaParent!.status).toBe('ok');
  expect(writeBody).toHaveBeenCalledTimes(1);
});

it('extend(): the child keeps the parent layers (bash stays restricted by the host)', async () => {
  const parent = new RestrictionSet([{ scope: 'host', deny: ['bash'] }]);
  const child = parent.extend({ scope: 'sub', deny: ['write_*'] });
  const result = await runOne({ restrictions: child }, { id: '1', name: 'bash', args: { cmd: 'ls' } });
  expect(result.error).toMatchObject({ code: 'restricted', scope: 'host', pattern: 'bash' });
});

it('an unknown_tool error lists only the tools the restrictions allow', async () => {
  const result = await runOne({ restrictions: hostAndAgent }, { id: '1', name: 'nope', args: {} });
  expect(result.status).toBe('error');
  if (result.error?.code !== 'unknown_tool') throw new Error(`expected unknown_tool, got ${result.error?.code}`);
  expect(result.error.available).toEqual(['mcp__github__get_issue', 'bash', 'read_file', 'write_file']);
  expect(result.error.available).not.toContain('mcp__github__delete_repo');
  expect(result.content).not.toContain('mcp__github__delete_repo');
  expect(result.content).toContain('read_file');
});

it('the restricted message lists the available tools but not the restricted ones', async () => {
  const restrictions = new RestrictionSet([{ scope: 'host', deny: ['mcp__*', 'bash'] }]);
  const result = await runOne({ restrictions }, { id: '1', name: 'bash', args: { cmd: 'ls' } });
  expect(result.error?.code).toBe('restricted');
  expect(result.content).toContain('Tool "bash" is not available here.');
  expect(result.content).toContain('read_file');
  expect(result.content).toContain('write_file');
  expect(result.content).not.toContain('mcp__github__get_issue');
  expect(result.content).not.toContain('mcp__github__delete_repo');
  expect(result.content).not.toMatch(/Available tools:.*bash/);
});

it('an empty RestrictionSet restricts nothing', async () => {
  const result = await runOne({ restrictions: new RestrictionSet([]) }, { id: '1', name: 'bash', args: { cmd: 'ls' } });
  expect(result.status).toBe('ok');
});

it('createPipeline rejects a restrictions option that is not a RestrictionSet with ConfigError naming restrictions', () => {
  let caught: unknown;
  try {
    createPipeline({ tools, restrictions: {} as unknown as RestrictionSet });
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  expect((caught as ConfigError).option).toBe('restrictions');
  expect((caught as ConfigError).where).toBe('createPipeline');
});

it('createPipeline rejects a plain object shaped like a set of layers', () => {
  const fake = { layers: [{ scope: 'host', allow: [], deny: ['bash'] }], resolve: () => ({ allowed: false }) };
  expect(() => createPipeline({ tools, restrictions: fake as unknown as RestrictionSet })).toThrow(ConfigError);
});
