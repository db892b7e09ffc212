import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type JournalStore, type ToolCall } from '../../src/index.js';

const SECRET = 'a test secret that is long enough to sign with';

function written() {
  const runs: string[] = [];
  const write = defineTool({ name: 'write', description: 'w', input: z.object({ path: z.string() }), execute: ({ path }) => (runs.push(path), `wrote ${path}`) });
  return { runs, tools: [write] };
}

const pipelineOf = (journal: JournalStore, tools: ReturnType<typeof written>['tools'], approvalSecret = SECRET) =>
  createPipeline({ tools, journal, approvalSecret, pre: [askTools(['write'])], approve: suspendApprovals() });

// The model sent two calls with one id: intake answers the second `duplicate_id`, the first waits.
const twice: ToolCall[] = [
  { id: 'x', name: 'write', args: { path: 'a' } },
  { id: 'x', name: 'write', args: { path: 'b' } },
];
const outline = (results: readonly { id: string; status: string; error?: { code: string } | undefined }[]) => results.map((r) => [r.id, r.status, r.error?.code]);

describe('a call id the model sent twice', () => {
  it('does not shadow the suspended call: its token resumes it, once', async () => {
    const journal = memoryJournal();
    const { tools, runs } = written();
    const first = await pipelineOf(journal, tools).run(twice, { turn: 't' });
    expect(outline(first)).toEqual([['x', 'suspended', 'approval_pending'], ['x', 'error', 'duplicate_id']]);
    const pending = await pipelineOf(journal, tools).pendingApprovals('t');
    expect(pending.map(({ callId, index }) => [callId, index])).toEqual([['x', 0]]);
    const answers = [{ token: pending[0]!.token, answer: 'allowed-once' as const }];

    const resumed = await pipelineOf(journal, tools).resume('t', { answers });
    expect(outline(resumed)).toEqual([['x', 'ok', undefined], ['x', 'error', 'duplicate_id']]);
    expect(runs).toEqual(['a']);
    expect(await pipelineOf(journal, tools).pendingApprovals('t')).toEqual([]);

    // Used now: refused as any used token is, and nothing runs again.
    await expect(pipelineOf(journal, tools).resume('t', { answers })).rejects.toMatchObject({ code: 'token_used' });
    expect(runs).toEqual(['a']);
  });

  it('a rejection answers the suspended call, not its duplicate', async () => {
    const journal = memoryJournal();
    const { tools, runs } = written();
    await pipelineOf(journal, tools).run(twice, { turn: 't' });
    const [approval] = await pipelineOf(journal, tools).pendingApprovals('t');
    const resumed = await pipelineOf(journal, tools).resume('t', { answers: [{ token: approval!.token, answer: 'rejected' }] });
    expect(outline(resumed)).toEqual([['x', 'denied', 'approval_rejected'], ['x', 'error', 'duplicate_id']]);
    expect(runs).toEqual([]);
  });

  it('still refuses forged, wrong-turn and expired tokens for that id', async () => {
    const journal = memoryJournal();
    const { tools, runs } = written();
    await pipelineOf(journal, tools).run(twice, { turn: 't' });
    await pipelineOf(journal, tools).run(twice, { turn: 'u' });
    const [approval] = await pipelineOf(journal, tools).pendingApprovals('t');
    const [other] = await pipelineOf(journal, tools).pendingApprovals('u');
    const forger = pipelineOf(journal, tools, 'another secret, just as long as the first!');
    await expect(forger.resume('t', { answers: [{ token: approval!.token, answer: 'allowed-once' }] })).rejects.toMatchObject({ code: 'token_forged' });
    await expect(pipelineOf(journal, tools).resume('t', { answers: [{ token: other!.token, answer: 'allowed-once' }] })).rejects.toMatchObject({ code: 'token_wrong_turn' });
    // The same token twice in one resume: the second is refused as used.
    await expect(
      pipelineOf(journal, tools).resume('t', { answers: [{ token: approval!.token, answer: 'allowed-once' }, { token: approval!.token, answer: 'allowed-once' }] }),
    ).rejects.toMatchObject({ code: 'token_used' });
    expect(runs).toEqual([]);

    const expiring = createPipeline({ tools, journal, approvalSecret: SECRET, approvalTtlMs: 1, pre: [askTools(['write'])], approve: suspendApprovals() });
    await expiring.run(twice, { turn: 'e' });
    const [soon] = await expiring.pendingApprovals('e');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(expiring.resume('e', { answers: [{ token: soon!.token, answer: 'allowed-once' }] })).rejects.toMatchObject({ code: 'token_expired' });
    expect(runs).toEqual([]);
  });
});
