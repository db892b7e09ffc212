import { of, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, memoryJournal, type AnyTool, type JournalEntry, type JournalStore, type ToolResult } from '../../src/index.js';

// The journal's write-ahead `started`, through its own execute middleware (the outermost, after the
// start checks): written once per call, durable — and the lease known live — before each attempt's
// body, which never runs otherwise.

const SECRET = 'a test secret that is long enough to sign with';
const run = (store: JournalStore, tools: readonly AnyTool[], observed: ToolResult[] = [], leaseMs?: number) =>
  createPipeline({ tools, journal: store, approvalSecret: SECRET, observers: [(result) => void observed.push(result)], ...(leaseMs === undefined ? {} : { leaseMs }) });

/** `store`, its appends answered `answer(entries)` when it says so (else as the store does), each a few ms late. */
function storeWith(store: JournalStore, answer: (entries: readonly JournalEntry[]) => 'refuse' | 'fail' | undefined): JournalStore {
  return {
    ...store,
    append: async (key, entries, lease) => {
      await new Promise((resolve) => setTimeout(resolve, 5)); // a store that takes its time: a body must wait for it
      const given = answer(entries);
      if (given === 'fail') throw new Error('disk full');
      if (given === 'refuse') return false;
      return store.append(key, entries, lease);
    },
  };
}

const kindsOf = async (store: JournalStore, turn: string, index: number): Promise<string[]> =>
  (await store.read(turn)).flatMap((entry) => (entry.kind === 'ended' || entry.index !== index ? [] : [entry.kind]));

describe('the journal’s `started`, written ahead of the body', () => {
  it('is durable before the body runs (a slow store: the body waits for it)', async () => {
    const journal = memoryJournal();
    const store = storeWith(journal, () => undefined);
    const seen: string[][] = [];
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: async () => (seen.push(await kindsOf(journal, 't', 0)), 'wrote') });
    const [result] = await run(store, [write]).run([{ id: 'w', name: 'write', args: {} }], { turn: 't' });
    expect(result).toMatchObject({ status: 'ok', started: true });
    expect(seen).toEqual([['received', 'decided', 'started']]);
    expect(await kindsOf(journal, 't', 0)).toEqual(['received', 'decided', 'started', 'finished']);
  });

  it('on a virtual clock, a store that answers at once (memoryJournal): durable before the body too — which starts in the same tick as the call arrives', () => {
    const journal = memoryJournal();
    const seen: string[][] = [];
    const kinds = () => (journal.read('t') as readonly JournalEntry[]).map((entry) => entry.kind);
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (seen.push(kinds()), 'wrote') });
    const pipeline = createPipeline({ tools: [write], journal, approvalSecret: SECRET, scheduler: new VirtualTimeScheduler() });
    const subscription = of({ id: 'w', name: 'write', args: {} }).pipe(pipeline.operator({ turn: 't' })).subscribe();
    // Synchronously: the lease taken, `received`, `decided` and `started` appended, then the body.
    expect(seen).toEqual([['received', 'decided', 'started']]);
    subscription.unsubscribe();
  });

  it('on a real clock, a store that answers at once: what a tick brings is still one append (10 calls: 3 appends)', async () => {
    const journal = memoryJournal();
    const appends: string[][] = [];
    const counted: JournalStore = { ...journal, append: (key, entries, lease) => (appends.push(entries.map((entry) => entry.kind)), journal.append(key, entries, lease)) };
    const noop = defineTool({ name: 'noop', description: 'n', input: z.object({}), mode: 'parallel', execute: async () => 'ok' });
    const calls = Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, name: 'noop', args: {} }));
    const results = await createPipeline({ tools: [noop], journal: counted, approvalSecret: SECRET, concurrency: 10 }).run(calls, { turn: 't' });
    expect(results.map((result) => result.status)).toEqual(Array(10).fill('ok'));
    // received, decided and started of every call; then every finished; then ended — not one append per call start and end.
    expect(appends.map((kinds) => kinds.length)).toEqual([30, 10, 1]);
  });

  it('a store that fails to write it: the body never runs, the call fails closed at the execute stage, the run with journal_failed', async () => {
    const ran: string[] = [];
    const observed: ToolResult[] = [];
    const store = storeWith(memoryJournal(), (entries) => (entries.some((entry) => entry.kind === 'started') ? 'fail' : undefined));
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (ran.push('write'), 'wrote') });
    await expect(run(store, [write], observed).run([{ id: 'w', name: 'write', args: {} }], { turn: 't' })).rejects.toMatchObject({ code: 'journal_failed' });
    expect(ran).toEqual([]);
    // What a result observer saw of it: the journal's middleware failed (no fake start check named "(journal)").
    expect(observed).toHaveLength(1);
    expect(observed[0]).toMatchObject({ status: 'denied', error: { code: 'policy_error', stage: 'execute', policy: 'journal', cause: { code: 'journal_failed' } } });
    expect(observed[0]!.trace).toEqual([expect.objectContaining({ stage: 'execute', event: 'failed', policy: 'journal' })]);
  });

  it('a store that refuses it (another process took the turn): the body never runs, the run fails with lease_lost', async () => {
    const ran: string[] = [];
    const store = storeWith(memoryJournal(), (entries) => (entries.some((entry) => entry.kind === 'started') ? 'refuse' : undefined));
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (ran.push('write'), 'wrote') });
    await expect(run(store, [write]).run([{ id: 'w', name: 'write', args: {} }], { turn: 't' })).rejects.toMatchObject({ code: 'lease_lost' });
    expect(ran).toEqual([]);
  });

  it('a retried call: one `started`, and a retry’s body waits until the lease is known live — it never runs once the lease is lost', async () => {
    const journal = memoryJournal();
    let stolen = false;
    const renewals: boolean[] = [];
    // Once stolen, another process holds the turn: a renewal is refused, after a round trip.
    const store: JournalStore = {
      ...journal,
      renew: async (lease, ms) => {
        if (!stolen) return journal.renew(lease, ms);
        await new Promise((resolve) => setTimeout(resolve, 50));
        renewals.push(false);
        return false;
      },
    };
    const attempts: number[] = [];
    const leaseMs = 300;
    const flaky = defineTool({
      name: 'flaky', description: 'f', input: z.object({}), idempotent: true, retry: { attempts: 2, backoff: { initialMs: 0 } },
      execute: () => {
        attempts.push(attempts.length + 1);
        if (attempts.length > 1) return 'ran again';
        // The process stalls past two renewal rounds (no timer runs), and meanwhile the turn is taken.
        stolen = true;
        const until = Date.now() + (2 * leaseMs) / 3 + 20;
        while (Date.now() < until);
        throw new Error('first attempt failed');
      },
    });
    await expect(run(store, [flaky], [], leaseMs).run([{ id: 'f', name: 'flaky', args: {} }], { turn: 't' })).rejects.toMatchObject({ code: 'lease_lost' });
    expect(attempts).toEqual([1]); // the retry's body never ran: the journal found the lease lost first
    expect(renewals).toContain(false);
  });

  it('a retried call that succeeds has one `started` entry, as before', async () => {
    const journal = memoryJournal();
    let n = 0;
    const flaky = defineTool({
      name: 'flaky', description: 'f', input: z.object({}), idempotent: true, retry: { attempts: 3, backoff: { initialMs: 0 } },
      execute: () => (++n < 3 ? Promise.reject(new Error(`attempt ${n}`)) : 'ok'),
    });
    const [result] = await run(journal, [flaky]).run([{ id: 'f', name: 'flaky', args: {} }], { turn: 't' });
    expect(result).toMatchObject({ status: 'ok', attempts: 3 });
    expect(await kindsOf(journal, 't', 0)).toEqual(['received', 'decided', 'started', 'finished']);
  });
});
