import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { allowTools, askTools, createPipeline, defineTool, denyTools, type Approver, type PreDecision, type PrePolicy } from '../../src/index.js';
import { globMatches, recase } from '../support/globs.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

const body = vi.fn(() => 'ran');
const tool = (name: string) => defineTool({ name, description: name, input: z.object({}), execute: body });

/** What a tool-pattern policy decides for a tool name, with the rest of the chain allowing. */
async function decide(policy: PrePolicy, name: string): Promise<PreDecision['decision'] | undefined> {
  const ctx = { call: { id: '1', name, args: {} }, tool: tool(name), args: {}, input: {}, index: 0, signal: new AbortController().signal };
  const verdict = (await policy(ctx as never, (async () => ({ decision: 'allow' })) as never)) as PreDecision | undefined;
  return verdict?.decision;
}


describe('tool patterns and case', () => {
  it('denyTools denies a server tool spelled with other cases (Delete_Repo, DELETE_REPO); its body never runs', async () => {
    body.mockClear();
    const tools = ['mcp__gh__Delete_Repo', 'mcp__gh__DELETE_REPO', 'mcp__GH__delete_repo', 'mcp__gh__get_repo'].map(tool);
    const pipeline = createPipeline({ tools, pre: [denyTools(['mcp__gh__delete_*'])] });

    const results = await pipeline.run(tools.map((t, i) => ({ id: `c${i}`, name: t.name, args: {} })));

    expect(results.map((r) => r.error?.code ?? r.status)).toEqual(['denied', 'denied', 'denied', 'ok']);
    expect(results[0]?.content).toContain('"mcp__gh__Delete_Repo" matches mcp__gh__delete_*');
    expect(body).toHaveBeenCalledTimes(1);
  });

  it('askTools asks for a case variant; allowTools allows only the exact spelling', async () => {
    const approve = vi.fn<Approver>(async () => 'rejected');
    const tools = ['Write_File', 'read_file', 'READ_file'].map(tool);
    const pipeline = createPipeline({ tools, pre: [askTools(['write_*']), allowTools(['read_*'])], defaultDecision: 'ask', approve });

    const [write, read, shouted] = await pipeline.run(tools.map((t, i) => ({ id: `c${i}`, name: t.name, args: {} })));

    expect(write?.error?.code).toBe('approval_rejected');
    expect(approve.mock.calls[0]?.[0]).toMatchObject({ reasons: ['"Write_File" matches write_*'] });
    expect(read?.status).toBe('ok');
    // Not exempted by `read_*`: the default `ask` applies, so the approver was asked about it too.
    expect(shouted?.error?.code).toBe('approval_rejected');
    expect(approve).toHaveBeenCalledTimes(2);
  });

  const letters = fc.constantFrom('a', 'b', 'D', 'e', '_', '1', '.');
  const word = fc.array(letters, { minLength: 1, maxLength: 8 }).map((c) => c.join(''));
  const glob = fc
    .array(fc.oneof(letters, fc.constantFrom('*', '?')), { minLength: 1, maxLength: 6 })
    .map((c) => c.join(''));
  const flips = fc.array(fc.boolean(), { minLength: 1, maxLength: 8 });

  it('property: deny and ask decide alike for every case variant of a name; they match what the lower-cased glob matches', async () => {
    await fc.assert(
      fc.asyncProperty(glob, word, flips, async (pattern, name, flip) => {
        const variant = recase(name, flip);
        const matches = globMatches(pattern.toLowerCase(), name.toLowerCase());
        expect(await decide(denyTools([pattern]), variant)).toBe(matches ? 'deny' : undefined);
        expect(await decide(askTools([pattern]), variant)).toBe(matches ? 'ask' : undefined);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('property: allowTools allows exactly the names its glob spells, case included', async () => {
    await fc.assert(
      fc.asyncProperty(glob, word, flips, async (pattern, name, flip) => {
        const variant = recase(name, flip);
        expect(await decide(allowTools([pattern]), variant)).toBe(globMatches(pattern, variant) ? 'allow' : undefined);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
