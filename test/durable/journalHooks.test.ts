import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type Approver, type JournalStore } from '../../src/index.js';

const SECRET = 'a test secret that is long enough to sign with';

/** The kinds of the entries `journal` holds for call `index` of `turn`, in order (answers with their answer). */
async function entriesOf(journal: JournalStore, turn: string, index: number): Promise<string[]> {
  const entries = await journal.read(turn);
  return entries.flatMap((entry) => (entry.kind === 'ended' || entry.index !== index ? [] : [entry.kind === 'approval_answered' ? `approval_answered ${entry.answer}` : entry.kind]));
}

describe('the journal as call hooks: what it writes of an approval', () => {
  const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => 'wrote' });
  const pipelineOf = (journal: JournalStore, approve: Approver) => createPipeline({ tools: [write], journal, approvalSecret: SECRET, pre: [askTools(['write'])], approve });

  it('an approved call: `approval_answered` allowed-once, before its `started`', async () => {
    const journal = memoryJournal();
    await pipelineOf(journal, async () => 'allowed-once').run([{ id: 'w', name: 'write', args: {} }], { turn: 't' });
    expect(await entriesOf(journal, 't', 0)).toEqual(['received', 'decided', 'approval_answered allowed-once', 'started', 'finished']);
  });

  it('a rejected call: `approval_answered` rejected, and it never starts', async () => {
    const journal = memoryJournal();
    await pipelineOf(journal, async () => 'rejected').run([{ id: 'w', name: 'write', args: {} }], { turn: 't' });
    expect(await entriesOf(journal, 't', 0)).toEqual(['received', 'decided', 'approval_answered rejected', 'finished']);
  });

  it('an approver that fails: no answer is journaled (the call is denied)', async () => {
    const journal = memoryJournal();
    const [result] = await pipelineOf(journal, async () => {
      throw new Error('the approver is down');
    }).run([{ id: 'w', name: 'write', args: {} }], { turn: 't' });
    expect(result?.status).toBe('denied');
    expect(await entriesOf(journal, 't', 0)).toEqual(['received', 'decided', 'finished']);
  });

  it('a resume’s answer is journaled once, by the answer itself', async () => {
    const journal = memoryJournal();
    const pipeline = pipelineOf(journal, suspendApprovals());
    await pipeline.run([{ id: 'w', name: 'write', args: {} }], { turn: 't' });
    const [approval] = await pipeline.pendingApprovals('t');
    const [result] = await pipeline.resume('t', { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
    expect(result?.status).toBe('ok');
    const answers = (await entriesOf(journal, 't', 0)).filter((kind) => kind.startsWith('approval_answered'));
    expect(answers).toEqual(['approval_answered allowed-once']);
  });
});
