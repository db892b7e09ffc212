// examples/readme/approver.ts
// The README's approver, run with a stand-in for the terminal prompt that answers "y" to reads only.
import assert from 'node:assert/strict';
import { z } from 'zod';
import { askTools, createPipeline, defineTool } from 'toolstream';

const askInTerminal = async (question: string, _options: { signal: AbortSignal }) => (question.startsWith('Run read_file') ? 'y' : 'n');

// #region readme
import type { Approver } from 'toolstream';

const approve: Approver = async ({ tool, args, reasons }, signal) => {
  const answer = await askInTerminal(`Run ${tool.name} ${JSON.stringify(args)}? (${reasons.join('; ')})`, { signal });
  return answer === 'y' ? 'allowed-once' : 'rejected';
};
// #endregion readme

const tool = (name: string) => defineTool({ name, description: name, input: z.object({ path: z.string() }), execute: () => 'done' });
const results = await createPipeline({ tools: [tool('read_file'), tool('write_file')], pre: [askTools(['*'])], approve }).run([
  { id: '1', name: 'read_file', args: { path: 'a' } },
  { id: '2', name: 'write_file', args: { path: 'a' } },
]);
assert.deepEqual(results.map((r) => r.status), ['ok', 'denied']);
