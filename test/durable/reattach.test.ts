import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type AnyTool, type JournalStore, type ToolContext } from '../../src/index.js';
import { durableCallOf, markReattaching, type DurableCall } from '../../src/durable/reattach.js';
import { ProcessView } from '../support/crashes.js';
import { deferred } from '../support/deferred.js';

const SECRET = 'a test secret that is long enough to sign with';
const pipelineOf = (store: JournalStore, tools: readonly AnyTool[]) =>
  createPipeline({ tools, journal: store, approvalSecret: SECRET, pre: [askTools(['remote'])], approve: suspendApprovals() });

/** A tool whose body, like a remote one, records where its durable call stands. */
function remoteLike(seen: (DurableCall | undefined)[], body: () => unknown, reattaching = true) {
  const tool = defineTool({ name: 'remote', description: 'r', input: z.object({}), execute: (_: unknown, ctx: ToolContext) => (seen.push(durableCallOf(ctx)), body()) });
  return reattaching ? markReattaching(tool) : tool;
}

describe('a re-attaching tool in a durable turn', () => {
  it('its body learns the call\'s journal slot; resumed after a crash mid-body it runs again, re-admitted by the journaled answer', async () => {
    const journal = memoryJournal();
    const seen: (DurableCall | undefined)[] = [];
    const started = deferred();
    const dying = new ProcessView(journal);
    const first = pipelineOf(dying, [remoteLike(seen, () => (started.resolve(), new Promise<never>(() => {})))]);
    await first.run([{ id: 'r', name: 'remote', args: {} }], { turn: 't' });
    const [approval] = await first.pendingApprovals('t');
    void first.resume('t', { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
    await started.promise;
    dying.crash('t');

    const later = pipelineOf(journal, [remoteLike(seen, () => 'attached')]);
    const [result] = await later.resume('t');
    expect(result).toMatchObject({ status: 'ok', value: 'attached' }); // not asked again, not outcome_unknown
    expect(seen).toEqual([{ turn: 't', index: 0, resumed: false, leaseHeld: expect.any(Function) }, { turn: 't', index: 0, resumed: true, leaseHeld: expect.any(Function) }]);
    expect(seen[1]!.leaseHeld()).toBe(true); // this process drives the turn
  });

  it('without the mark the same crash answers outcome_unknown (not idempotent): the mark is what changes it', async () => {
    const journal = memoryJournal();
    const started = deferred();
    const dying = new ProcessView(journal);
    const first = createPipeline({ tools: [remoteLike([], () => (started.resolve(), new Promise<never>(() => {})), false)], journal: dying, approvalSecret: SECRET });
    void first.run([{ id: 'r', name: 'remote', args: {} }], { turn: 't' });
    await started.promise;
    dying.crash('t');
    const [result] = await createPipeline({ tools: [remoteLike([], () => 'ran', false)], journal, approvalSecret: SECRET }).resume('t');
    expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown' } });
  });

  it('outside a durable turn the body sees no durable call', async () => {
    const seen: (DurableCall | undefined)[] = [];
    await createPipeline({ tools: [remoteLike(seen, () => 1)] }).run([{ id: 'r', name: 'remote', args: {} }]);
    expect(seen).toEqual([undefined]);
  });
});
