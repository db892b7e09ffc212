import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type AnyTool, type JournalStore, type ToolResult } from '../../src/index.js';
import { appendAsProcess, nonceOf, ProcessView } from '../support/crashes.js';
import { deferred } from '../support/deferred.js';

const SECRET = 'a test secret that is long enough to sign with';
const outline = (results: readonly ToolResult[]) => results.map((r) => [r.id, r.status, r.error?.code]);
const pipelineOf = (store: JournalStore, tools: readonly AnyTool[]) =>
  createPipeline({ tools, journal: store, approvalSecret: SECRET, pre: [askTools(['write', 'fetch'])], approve: suspendApprovals() });

describe('resuming after a process stopped between two journal writes', () => {
  it('a call whose approval was consumed but whose body never started runs once, without asking again', async () => {
    const journal = memoryJournal();
    const runs: string[] = [];
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (runs.push('write'), 'wrote') });
    const pipeline = pipelineOf(journal, [write]);
    await pipeline.run([{ id: 'w', name: 'write', args: {} }], { turn: 't' });
    const [approval] = await pipeline.pendingApprovals('t');
    // What a process that consumed the approval and stopped before `started` leaves behind.
    expect(await journal.consume('t', nonceOf(approval!.token))).toBe(true);
    await appendAsProcess(journal, 't', [{ kind: 'approval_answered', index: 0, answer: 'allowed-once', at: Date.now() }]);

    expect(outline(await pipeline.resume('t'))).toEqual([['w', 'ok', undefined]]);
    expect(outline(await pipeline.resume('t'))).toEqual([['w', 'ok', undefined]]);
    expect(runs).toEqual(['write']);
  });

  it('an approved idempotent call whose process stopped while it ran is asked again, with a new token', async () => {
    const journal = memoryJournal();
    const ran: string[] = [];
    const started = deferred();
    const fetchOf = (body: () => unknown) => defineTool({ name: 'fetch', description: 'f', input: z.object({}), idempotent: true, execute: () => (ran.push('fetch'), body()) });
    const dying = new ProcessView(journal);
    const hanging = pipelineOf(dying, [fetchOf(() => (started.resolve(), new Promise<never>(() => {})))]);
    await hanging.run([{ id: 'f', name: 'fetch', args: {} }], { turn: 't' });
    const [first] = await hanging.pendingApprovals('t');
    void hanging.resume('t', { answers: [{ token: first!.token, answer: 'allowed-once' }] });
    await started.promise;
    dying.crash('t'); // the process stops while the approved body runs

    const later = pipelineOf(journal, [fetchOf(() => 'page')]);
    const [again] = await later.resume('t');
    if (again?.error?.code !== 'approval_pending') throw new Error(`expected a pending approval, got ${again?.content}`);
    const second = again.error.approval;
    expect(second.token).not.toBe(first!.token); // the first one is used up: it is never handed out again
    expect(await later.pendingApprovals('t')).toEqual([second]);
    expect(outline(await later.resume('t', { answers: [{ token: second.token, answer: 'allowed-once' }] }))).toEqual([['f', 'ok', undefined]]);
    expect(ran).toEqual(['fetch', 'fetch']);
  });

  it('a streamed result replayed from the journal is still streamed', async () => {
    const journal = memoryJournal();
    const lines = defineTool({
      name: 'lines',
      description: 'l',
      input: z.object({}),
      mode: 'parallel',
      async *execute() {
        yield 'one';
        yield 'two';
      },
    });
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => 'wrote' });
    const pipeline = pipelineOf(journal, [lines, write]);
    const [streamed] = await pipeline.run([{ id: 'l', name: 'lines', args: {} }, { id: 'w', name: 'write', args: {} }], { turn: 't' });
    const [replayed] = await pipeline.resume('t');
    expect(streamed).toMatchObject({ status: 'ok', streamed: true, value: ['one', 'two'] });
    expect(replayed).toMatchObject({ status: 'ok', streamed: true, value: ['one', 'two'], content: streamed!.content });
  });

  it('a store whose renewals throw at once, as a synchronous store does: the run stops with lease_lost once the lease expired, nothing escapes the timer', async () => {
    const journal = memoryJournal();
    let leases = 0;
    const failing: JournalStore = {
      ...journal,
      renew: () => {
        leases++;
        throw new Error('SQLITE_BUSY'); // every renewal
      },
    };
    // The body runs until the run stops it: however late the timers fire on a busy machine, the lease is
    // lost before the body could end. A lease of 600 ms (renewed every 200) is tried more than once
    // unless a round comes over 400 ms late.
    const slow = defineTool({ name: 'slow', description: 's', input: z.object({}), execute: (_args, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('stopped'))) });
    const uncaught: unknown[] = [];
    const saved = process.listeners('uncaughtException');
    const collect = (error: unknown) => void uncaught.push(error);
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', collect);
    try {
      const pipeline = createPipeline({ tools: [slow], journal: failing, approvalSecret: SECRET, leaseMs: 600 });
      await expect(pipeline.run([{ id: 's', name: 'slow', args: {} }], { turn: 't' })).rejects.toMatchObject({ code: 'lease_lost', results: [], cause: expect.objectContaining({ message: 'SQLITE_BUSY' }) });
    } finally {
      process.off('uncaughtException', collect);
      for (const listener of saved) process.on('uncaughtException', listener);
    }
    expect(leases).toBeGreaterThan(1);
    expect(uncaught).toEqual([]);
  });

  it('a renewal that fails once (a store blip) is tried again, and the run goes on', async () => {
    const journal = memoryJournal();
    let renewals = 0;
    const blip: JournalStore = {
      ...journal,
      renew: (lease, ms) => {
        if (++renewals === 1) throw new Error('ECONNRESET');
        return journal.renew(lease, ms);
      },
    };
    // The body runs until a renewal after the failed one succeeded (not for a fixed time the renewals
    // might not fit in on a busy machine). A lease of 600 ms (renewed every 200) outlives the failed
    // renewal unless the next round comes over 400 ms late.
    const renewedAfterBlip = deferred();
    const slow = defineTool({ name: 'slow', description: 's', input: z.object({}), execute: () => renewedAfterBlip.promise.then(() => 'done') });
    const watched: JournalStore = {
      ...blip,
      renew: (lease, ms) => {
        const renewed = blip.renew(lease, ms); // at once, as memoryJournal answers: the blip throws
        if (renewals > 1 && renewed === true) renewedAfterBlip.resolve();
        return renewed;
      },
    };
    const pipeline = createPipeline({ tools: [slow], journal: watched, approvalSecret: SECRET, leaseMs: 600 });
    expect(outline(await pipeline.run([{ id: 's', name: 'slow', args: {} }], { turn: 't' }))).toEqual([['s', 'ok', undefined]]);
    expect(renewals).toBeGreaterThan(1);
  });
});
