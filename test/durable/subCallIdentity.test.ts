/**
 * A program's sub-call is a call of its own in a durable turn: its durable identity (what a remote
 * tool's job id and `ctx.idempotencyKey` derive from) is its program's journal and slot — never that of
 * the turn's call with the same index, nor of another program's sub-call at the same position.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, memoryJournal, runCodeTool } from '../../src/index.js';
import { scriptedRuntime, type ScriptTools } from './programsRuntime.js';

describe('the durable identity of a program\'s sub-calls', () => {
  it('differs from the turn\'s calls and from other programs\' sub-calls at the same position', async () => {
    const keys: Record<string, string> = {};
    const note = defineTool({
      name: 'note',
      description: 'n',
      input: z.object({ label: z.string() }),
      mode: 'parallel',
      idempotent: true,
      execute: ({ label }, { idempotencyKey }) => ((keys[label] = idempotencyKey), label),
    });
    const runtime = scriptedRuntime({ one: async (t: ScriptTools) => t.note!({ label: 'sub of p1' }), two: async (t: ScriptTools) => t.note!({ label: 'sub of p2' }) });
    const journal = memoryJournal();
    const pipeline = createPipeline({ tools: [note, runCodeTool({ runtime })], journal, approvalSecret: 'a test secret that is long enough to sign with' });
    await pipeline.run(
      [
        { id: 'n0', name: 'note', args: { label: 'call 0' } },
        { id: 'p1', name: 'run_code', args: { program: 'one' } },
        { id: 'p2', name: 'run_code', args: { program: 'two' } },
      ],
      { turn: 't' },
    );
    expect(new Set(Object.values(keys)).size).toBe(3);
    expect(Object.keys(keys).sort()).toEqual(['call 0', 'sub of p1', 'sub of p2']);
  });
});
