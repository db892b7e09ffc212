// examples/readme/policies.ts
// The README's policy example, run: large writes are asked about, shell calls too, a sandbox keeps paths in.
import assert from 'node:assert/strict';
import { z } from 'zod';
import { defineTool, type Approver } from 'toolstream';

const asked: string[] = [];
const approve: Approver = async (request) => (asked.push(request.tool.name), 'rejected');
const tools = [
  defineTool({ name: 'write_file', description: 'Write a file', input: z.object({ path: z.string(), content: z.string() }), execute: () => 'written' }),
  defineTool({ name: 'shell', description: 'Run a command', input: z.object({ command: z.string() }), execute: () => 'ran' }),
];

// #region readme
import { createPipeline, askTools, denyTools, type PrePolicy } from 'toolstream';
import { pathSandbox } from 'toolstream/node';

// Let the rest of the chain decide, then tighten: large writes need a human.
const bigWrites: PrePolicy = async function bigWrites(ctx, next) {
  const verdict = await next();
  const { content = '' } = ctx.args as { content?: string };
  if (verdict.decision !== 'allow' || content.length <= 10_000) return undefined; // keep what came back
  return { decision: 'ask', reason: `${content.length} characters` };
};

const pipeline = createPipeline({
  tools,
  pre: [denyTools(['mcp__github__delete_*']), pathSandbox({ root: process.cwd() }), askTools(['shell']), bigWrites],
  approve,
});
// #endregion readme

const results = await pipeline.run([
  { id: '1', name: 'write_file', args: { path: 'notes.md', content: 'short' } },
  { id: '2', name: 'write_file', args: { path: 'big.md', content: 'x'.repeat(20_000) } },
  { id: '3', name: 'shell', args: { command: 'ls' } },
  { id: '4', name: 'write_file', args: { path: '../outside.md', content: 'x' } },
]);
assert.deepEqual(results.map((r) => [r.id, r.status, r.error?.code]), [
  ['1', 'ok', undefined],
  ['2', 'denied', 'approval_rejected'],
  ['3', 'denied', 'approval_rejected'],
  ['4', 'denied', 'denied'],
]);
assert.deepEqual(asked, ['write_file', 'shell']);
