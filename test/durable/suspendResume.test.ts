import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  askTools,
  ConfigError,
  createPipeline,
  defineTool,
  DurableTurnError,
  memoryJournal,
  suspendApprovals,
  type JournalStore,
  type PipelineOptions,
  type PrePolicy,
  type ToolCall,
} from '../../src/index.js';
import { tick } from '../faults/helpers.js';
import { deferred } from '../support/deferred.js';

const SECRET = 'a test secret that is long enough to sign with';

/** Tools that count their runs, so a test can tell a replay from a re-run. */
function counted() {
  const runs: string[] = [];
  const read = defineTool({ name: 'read', description: 'r', input: z.object({ path: z.string() }), mode: 'parallel', execute: ({ path }) => (runs.push(`read ${path}`), `text of ${path}`) });
  const write = defineTool({ name: 'write', description: 'w', input: z.object({ path: z.string() }), execute: ({ path }) => (runs.push(`write ${path}`), `wrote ${path}`) });
  return { runs, tools: [read, write] };
}

const pipelineOf = (journal: JournalStore, tools: PipelineOptions['tools'], extra: Partial<PipelineOptions> = {}) =>
  createPipeline({ tools, journal, approvalSecret: SECRET, pre: [askTools(['write'])], approve: suspendApprovals(), ...extra });

const calls: ToolCall[] = [
  { id: 'r1', name: 'read', args: { path: 'a' } },
  { id: 'w1', name: 'write', args: { path: 'b' } },
  { id: 'r2', name: 'read', args: { path: 'c' } },
];
const outline = (results: readonly { id: string; status: string; error?: { code: string } | undefined }[]) => results.map((r) => [r.id, r.status, r.error?.code]);

describe('suspend and resume', () => {
  it('suspending outside a durable turn fails closed', async () => {
    const { tools, runs } = counted();
    const [result] = await createPipeline({ tools, pre: [askTools(['write'])], approve: suspendApprovals() }).run([calls[1]!]);
    expect(result?.error?.code).toBe('approval_unavailable');
    expect(result?.content).toMatch(/suspending needs a durable turn/);
    expect(runs).toEqual([]);
  });

  it('a write suspends while the reads run; resuming with the approval runs it once and replays the rest', async () => {
    const journal = memoryJournal();
    const { tools, runs } = counted();
    const first = await pipelineOf(journal, tools).run(calls, { turn: 't1' });
    // r2 may not overtake the exclusive write: it waits behind it, suspended too.
    expect(outline(first)).toEqual([['r1', 'ok', undefined], ['w1', 'suspended', 'approval_pending'], ['r2', 'suspended', 'behind_suspended']]);
    expect(runs).toEqual(['read a']);

    // Another pipeline, as in another process sharing the store.
    const later = pipelineOf(journal, tools);
    const [approval] = await later.pendingApprovals('t1');
    expect(approval).toMatchObject({ turn: 't1', callId: 'w1', index: 1, tool: 'write', args: { path: 'b' }, reasons: ['"write" matches write'] });
    if (first[1]?.error?.code !== 'approval_pending') throw new Error('expected a pending approval');
    expect(first[1].error.approval.token).toBe(approval!.token);

    const resumed = await later.resume('t1', { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
    expect(outline(resumed)).toEqual([['r1', 'ok', undefined], ['w1', 'ok', undefined], ['r2', 'ok', undefined]]);
    expect(resumed.map((r) => r.content)).toEqual(['text of a', 'wrote b', 'text of c']);
    expect(runs).toEqual(['read a', 'write b', 'read c']); // r1 was replayed, not run again
    expect(await later.pendingApprovals('t1')).toEqual([]);

    // The turn is done: resuming again replays everything and runs nothing.
    expect(outline(await later.resume('t1'))).toEqual(outline(resumed));
    expect(runs).toHaveLength(3);
  });

  it('a rejection denies the call; no answer leaves it suspended with the same token', async () => {
    const journal = memoryJournal();
    const { tools, runs } = counted();
    const pipeline = pipelineOf(journal, tools);
    await pipeline.run(calls, { turn: 't' });
    const [approval] = await pipeline.pendingApprovals('t');
    const still = await pipeline.resume('t');
    expect(outline(still)[1]).toEqual(['w1', 'suspended', 'approval_pending']);
    expect((await pipeline.pendingApprovals('t'))[0]!.token).toBe(approval!.token);
    const rejected = await pipeline.resume('t', { answers: [{ token: approval!.token, answer: 'rejected' }] });
    expect(outline(rejected)[1]).toEqual(['w1', 'denied', 'approval_rejected']);
    expect(runs).toEqual(['read a', 'read c']); // r2 ran once the write was answered
  });

  it('refuses tokens that are altered, forged, for another turn, expired or used — and nothing runs', async () => {
    const journal = memoryJournal();
    const { tools, runs } = counted();
    const pipeline = pipelineOf(journal, tools, { approvalTtlMs: 60_000 });
    await pipeline.run(calls, { turn: 'a' });
    await pipeline.run([{ id: 'w9', name: 'write', args: { path: 'z' } }], { turn: 'b' });
    const [approval] = await pipeline.pendingApprovals('a');
    const [other] = await pipeline.pendingApprovals('b');
    const token = approval!.token;
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const forger = pipelineOf(journal, tools, { approvalSecret: 'another secret, just as long as the first!' });
    const cases: [Promise<unknown>, string][] = [
      [pipeline.resume('a', { answers: [{ token: flip(token, 5), answer: 'allowed-once' }] }), 'token_forged'],
      [pipeline.resume('a', { answers: [{ token: 'not a token', answer: 'allowed-once' }] }), 'token_malformed'],
      [pipeline.resume('a', { answers: [{ token: other!.token, answer: 'allowed-once' }] }), 'token_wrong_turn'],
      [forger.resume('a', { answers: [{ token, answer: 'allowed-once' }] }), 'token_forged'],
    ];
    for (const [attempt, code] of cases) await expect(attempt).rejects.toMatchObject({ code });
    expect(runs).toEqual(['read a']);

    await pipeline.resume('a', { answers: [{ token, answer: 'allowed-once' }] });
    await expect(pipeline.resume('a', { answers: [{ token, answer: 'allowed-once' }] })).rejects.toMatchObject({ code: 'token_used' });
    expect(runs.filter((run) => run.startsWith('write'))).toEqual(['write b']);

    const expiring = pipelineOf(memoryJournal(), tools, { approvalTtlMs: 1 });
    await expiring.run(calls, { turn: 'e' });
    const [soon] = await expiring.pendingApprovals('e');
    await tick(5);
    await expect(expiring.resume('e', { answers: [{ token: soon!.token, answer: 'allowed-once' }] })).rejects.toBeInstanceOf(DurableTurnError);
  });

  it('an approval answers only the arguments it was given for', async () => {
    const journal = memoryJournal();
    const { tools, runs } = counted();
    await pipelineOf(journal, tools).run(calls, { turn: 't' });
    const [approval] = await pipelineOf(journal, tools).pendingApprovals('t');
    // Today a policy rewrites the path: the approval was for other arguments.
    const rewrite: PrePolicy = function rewrite(ctx) {
      if (ctx.call.name === 'write') ctx.rewriteArgs({ path: 'elsewhere' });
      return undefined;
    };
    const resumed = await pipelineOf(journal, tools, { pre: [rewrite, askTools(['write'])] }).resume('t', { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
    expect(outline(resumed)[1]).toEqual(['w1', 'denied', 'approval_error']);
    expect(resumed[1]!.content).toMatch(/given for other arguments/);
    expect(runs.filter((run) => run.startsWith('write'))).toEqual([]);
  });

  it('resuming can only tighten: a call today\'s policies deny is denied even with its approval', async () => {
    const journal = memoryJournal();
    const { tools, runs } = counted();
    await pipelineOf(journal, tools).run(calls, { turn: 't' });
    const [approval] = await pipelineOf(journal, tools).pendingApprovals('t');
    const noWrites: PrePolicy = function noWrites(ctx) {
      return ctx.call.name === 'write' ? { decision: 'deny', reason: 'frozen today' } : undefined;
    };
    const resumed = await pipelineOf(journal, tools, { pre: [noWrites] }).resume('t', { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
    expect(outline(resumed)[1]).toEqual(['w1', 'denied', 'denied']);
    expect(runs.filter((run) => run.startsWith('write'))).toEqual([]);
  });

  it('a call behind a suspended exclusive call is suspended too, and runs on resume', async () => {
    const journal = memoryJournal();
    const { tools, runs } = counted();
    const batch: ToolCall[] = [
      { id: 'w1', name: 'write', args: { path: 'b' } },
      { id: 'r1', name: 'read', args: { path: 'a' } },
      { id: 'w2', name: 'write', args: { path: 'c' } },
    ];
    const pipeline = pipelineOf(journal, tools, { pre: [askTools(['write'])] });
    const first = await pipeline.run(batch, { turn: 't' });
    expect(outline(first)).toEqual([['w1', 'suspended', 'approval_pending'], ['r1', 'suspended', 'behind_suspended'], ['w2', 'suspended', 'approval_pending']]);
    expect(runs).toEqual([]);
    const approvals = await pipeline.pendingApprovals('t');
    expect(approvals.map((a) => a.callId)).toEqual(['w1', 'w2']);
    const resumed = await pipeline.resume('t', { answers: approvals.map(({ token }) => ({ token, answer: 'allowed-once' as const })) });
    expect(outline(resumed)).toEqual([['w1', 'ok', undefined], ['r1', 'ok', undefined], ['w2', 'ok', undefined]]);
    expect(runs).toEqual(['write b', 'read a', 'write c']);
  });

  it('crash recovery: a started, unfinished call re-runs only if its tool is idempotent', async () => {
    const journal = memoryJournal();
    const hang = new Promise<never>(() => {});
    const ran: string[] = [];
    const charge = defineTool({ name: 'charge', description: 'c', input: z.object({}), mode: 'parallel', execute: () => (ran.push('charge'), hang) });
    const fetchPage = defineTool({ name: 'fetch', description: 'f', input: z.object({}), mode: 'parallel', idempotent: true, execute: () => (ran.push('fetch'), hang) });
    const crashed = new Subject<ToolCall>();
    // "Crash": the process stops mid-turn — here the subscription is dropped while both bodies run.
    const subscription = crashed.pipe(createPipeline({ tools: [charge, fetchPage], journal, approvalSecret: SECRET }).operator({ turn: 't' })).subscribe();
    crashed.next({ id: 'f', name: 'fetch', args: {} });
    await tick(5);
    crashed.next({ id: 'c', name: 'charge', args: {} });
    await tick(5);
    subscription.unsubscribe();
    expect(ran).toEqual(['fetch', 'charge']);

    const fresh: string[] = [];
    const chargeAgain = defineTool({ name: 'charge', description: 'c', input: z.object({}), mode: 'parallel', execute: () => (fresh.push('charge'), 'charged') });
    const fetchAgain = defineTool({ name: 'fetch', description: 'f', input: z.object({}), mode: 'parallel', idempotent: true, execute: () => (fresh.push('fetch'), 'page') });
    const resumed = await createPipeline({ tools: [chargeAgain, fetchAgain], journal, approvalSecret: SECRET, leaseMs: 1 }).resume('t');
    expect(outline(resumed)).toEqual([['f', 'ok', undefined], ['c', 'error', 'outcome_unknown']]);
    expect(resumed[1]!.content).toMatch(/may or may not have taken effect/);
    expect(fresh).toEqual(['fetch']);
  });

  it('one process drives a turn at a time, and a turn runs once', async () => {
    const journal = memoryJournal();
    const gate = deferred();
    const slow = defineTool({ name: 'slow', description: 's', input: z.object({}), execute: () => gate.promise.then(() => 'done') });
    const pipeline = createPipeline({ tools: [slow], journal, approvalSecret: SECRET });
    const running = pipeline.run([{ id: '1', name: 'slow', args: {} }], { turn: 't' });
    await tick(5);
    await expect(pipeline.resume('t')).rejects.toMatchObject({ code: 'turn_leased' });
    gate.resolve();
    await running;
    await expect(pipeline.run([{ id: '1', name: 'slow', args: {} }], { turn: 't' })).rejects.toMatchObject({ code: 'turn_exists' });
    await expect(pipeline.resume('nope')).rejects.toMatchObject({ code: 'turn_unknown' });
  });

  it('a turn without a journal is a ConfigError; the journal needs a secret of 32 bytes', () => {
    const { tools } = counted();
    expect(() => createPipeline({ tools }).operator({ turn: 't' })).toThrow(ConfigError);
    expect(() => createPipeline({ tools, journal: memoryJournal() })).toThrow(/`approvalSecret` must be a string or Uint8Array of at least 32 bytes/);
    expect(() => createPipeline({ tools, journal: memoryJournal(), approvalSecret: 'short' })).toThrow(ConfigError);
    expect(() => createPipeline({ tools, approvalSecret: SECRET })).toThrow(/set only with a `journal`/);
  });
});

describe('an approval consumed by a process that stopped before the body started', () => {
  it('still admits that one run when the turn is resumed with it', async () => {
    const shared = memoryJournal();
    let dead = false;
    // A process whose writes die once it has consumed the approval: it stops before the body starts.
    const dying: JournalStore = {
      ...shared,
      append: (key, entries, lease) => {
        if (dead) throw new Error('the process is gone');
        return shared.append(key, entries, lease);
      },
      consume: (turn, nonce) => {
        dead = true;
        return shared.consume(turn, nonce);
      },
    };
    const { tools, runs } = counted();
    await pipelineOf(shared, tools).run([calls[1]!], { turn: 't' });
    const [approval] = await pipelineOf(shared, tools).pendingApprovals('t');
    const answers = [{ token: approval!.token, answer: 'allowed-once' as const }];
    await pipelineOf(dying, tools).resume('t', { answers }).catch(() => undefined);
    expect(runs).toEqual([]);
    const resumed = await pipelineOf(shared, tools).resume('t', { answers });
    expect(outline(resumed)).toEqual([['w1', 'ok', undefined]]);
    expect(runs).toEqual(['write b']);
    await expect(pipelineOf(shared, tools).resume('t', { answers })).rejects.toMatchObject({ code: 'token_used' });
    expect(runs).toEqual(['write b']);
  });
});

it('a schema output without a JSON form does not break the journal', async () => {
  const big = defineTool({ name: 'big', description: 'b', input: z.object({ n: z.string().transform((s) => BigInt(s)) }), execute: ({ n }) => String(n * 2n) });
  const journal = memoryJournal();
  const [result] = await createPipeline({ tools: [big], journal, approvalSecret: SECRET }).run([{ id: '1', name: 'big', args: { n: '21' } }], { turn: 't' });
  expect(result?.content).toBe('42');
  expect(outline(await createPipeline({ tools: [big], journal, approvalSecret: SECRET }).resume('t'))).toEqual([['1', 'ok', undefined]]);
});

describe('an exclusive call whose outcome is unknown after a crash', () => {
  it('fails where it would have run: the calls after it in its turn are cancelled, those before run', async () => {
    const journal = memoryJournal();
    const hang = new Promise<never>(() => {});
    const read = defineTool({ name: 'read', description: 'r', input: z.object({}), mode: 'parallel', execute: () => 'read' });
    const deploy = defineTool({ name: 'deploy', description: 'd', input: z.object({}), execute: () => hang });
    const crashed = new Subject<ToolCall>();
    const subscription = crashed.pipe(createPipeline({ tools: [read, deploy], journal, approvalSecret: SECRET }).operator({ turn: 't' })).subscribe();
    crashed.next({ id: 'r1', name: 'read', args: {} });
    crashed.next({ id: 'd', name: 'deploy', args: {} });
    crashed.next({ id: 'r2', name: 'read', args: {} });
    await tick(5);
    subscription.unsubscribe(); // the deploy had started; r2 waited behind it

    const ran: string[] = [];
    const slowRead = defineTool({ name: 'read', description: 'r', input: z.object({}), mode: 'parallel', execute: async () => (await tick(5), ran.push('read'), 'read') });
    const resumed = await createPipeline({ tools: [slowRead, deploy], journal, approvalSecret: SECRET }).resume('t');
    expect(outline(resumed)).toEqual([['r1', 'ok', undefined], ['d', 'error', 'outcome_unknown'], ['r2', 'cancelled', 'cancelled']]);
    expect(resumed[2]!.error).toMatchObject({ reason: 'sibling_failed', byCallId: 'd', started: false });
    expect(ran).toEqual([]); // r1 was replayed; r2 never ran
  });
});
