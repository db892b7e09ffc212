/**
 * Retention of durable turns: a run that answered every call journals `ended` (with, when calls are
 * still suspended, when their tokens expire), and `prune` removes what ended before a time — never a
 * turn still running, and a suspended one only once asked to and its tokens have expired.
 */
import { of } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type JournalEntry } from '../../src/index.js';

const SECRET = 'the retention tests sign with this long secret';
const read = defineTool({ name: 'read', description: 'r', input: z.object({}), mode: 'parallel', execute: () => 'text' });
const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => 'wrote' });
const last = (entries: readonly JournalEntry[]) => entries[entries.length - 1];

afterEach(() => {
  vi.restoreAllMocks();
});

describe('retention', () => {
  it('a run that answers every call ends its journal with `ended`; one with suspended calls says until when they can be answered', async () => {
    const journal = memoryJournal();
    const pipeline = createPipeline({ tools: [read, write], journal, approvalSecret: SECRET, approvalTtlMs: 60_000, pre: [askTools(['write'])], approve: suspendApprovals() });
    await pipeline.run([{ id: 'r', name: 'read', args: {} }], { turn: 'done' });
    expect(last(await journal.read('done'))).toMatchObject({ kind: 'ended' });
    expect(last(await journal.read('done'))).not.toHaveProperty('suspendedUntil');

    await pipeline.run([{ id: 'r', name: 'read', args: {} }, { id: 'w', name: 'write', args: {} }], { turn: 'waiting' });
    const [approval] = await pipeline.pendingApprovals('waiting');
    expect(last(await journal.read('waiting'))).toEqual({ kind: 'ended', at: expect.any(Number), suspendedUntil: approval!.expiresAt });
    // Resumed without an answer, it ends again, still waiting; answered, it ends finished.
    await pipeline.resume('waiting');
    expect(last(await journal.read('waiting'))).toMatchObject({ kind: 'ended', suspendedUntil: approval!.expiresAt });
    await pipeline.resume('waiting', { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
    expect(last(await journal.read('waiting'))).toEqual({ kind: 'ended', at: expect.any(Number) });
  });

  it('a run that did not answer every call (unsubscribed) does not end its turn', async () => {
    const journal = memoryJournal();
    const slow = defineTool({ name: 'slow', description: 's', input: z.object({}), execute: (_args, { signal }) => new Promise((resolve) => signal.addEventListener('abort', resolve)) });
    const pipeline = createPipeline({ tools: [slow], journal, approvalSecret: SECRET });
    const subscription = of({ id: 's', name: 'slow', args: {} }).pipe(pipeline.operator({ turn: 'dropped' })).subscribe();
    await new Promise((resolve) => setTimeout(resolve, 10));
    subscription.unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await journal.read('dropped')).some((entry) => entry.kind === 'ended')).toBe(false);
    expect(await journal.prune({ finishedBefore: Number.MAX_SAFE_INTEGER, suspended: 'expired' })).toBe(0);
  });

  it('prune removes turns that ended before the time given, suspended ones only with `expired` once their tokens have', async () => {
    const journal = memoryJournal();
    let now = 1_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    const pipeline = createPipeline({ tools: [read, write], journal, approvalSecret: SECRET, approvalTtlMs: 10_000, pre: [askTools(['write'])], approve: suspendApprovals() });
    await pipeline.run([{ id: 'r', name: 'read', args: {} }], { turn: 'old' });
    await pipeline.run([{ id: 'w', name: 'write', args: {} }], { turn: 'suspended' });
    now += 5_000;
    await pipeline.run([{ id: 'r', name: 'read', args: {} }], { turn: 'new' });

    expect(await journal.prune({ finishedBefore: now - 1_000 })).toBe(1); // old; suspended is kept
    await expect(pipeline.resume('old')).rejects.toMatchObject({ code: 'turn_unknown' });
    expect(await pipeline.resume('suspended')).toMatchObject([{ status: 'suspended' }]);
    expect(await journal.prune({ finishedBefore: now - 1_000, suspended: 'expired' })).toBe(0); // its token lives until +10 s
    now += 10_000;
    expect(await journal.prune({ finishedBefore: now, suspended: 'expired' })).toBe(2); // suspended (token expired), new
    expect(await journal.read('new')).toEqual([]);
    // A turn id pruned is a new turn: it runs again from the start.
    expect(await pipeline.run([{ id: 'r', name: 'read', args: {} }], { turn: 'old' })).toMatchObject([{ status: 'ok' }]);
  });
});
