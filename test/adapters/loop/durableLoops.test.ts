import { afterEach, describe, expect, it } from 'vitest';
import { ContinuationError, hasToolCall, stepCountIs } from '../../../src/adapters/loop/index.js';
import { createPipeline, memoryJournal, type JournalStore } from '../../../src/index.js';
import { startReplayServer, type ReplayServer } from '../../support/replayServer.js';
import { CALLS, durablePipeline, EXPECTED, onWrite, readNote, StolenStore, written } from './fixture.js';
import { historyOf, PATHS, prompt, PROVIDERS, runLoop, sseOf, type Provider, type ScriptCall } from './wire.js';

// The durable loops of the three providers, with the official SDK clients against a loopback server:
// a loop whose step suspends stops with its pending approvals and a continuation; re-entered (from a
// fresh pipeline on the same store), the next request carries every result of the turn in the model's
// order; a continuation is accepted once, and refused when altered — nothing is sent to the model then.

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const script = async (provider: Provider, responses: readonly { text?: string; calls?: readonly ScriptCall[] }[]) =>
  (server = await startReplayServer(responses.map((response, i) => ({ path: PATHS[provider], sse: sseOf(provider, response, i + 1) }))));

/** Runs step 1 until it suspends on the write. */
async function suspendedLoop(provider: Provider, store: JournalStore, turn: string) {
  const srv = await script(provider, [{ text: 'Reading and writing.', calls: CALLS }, { text: 'All done.' }]);
  const loop = await runLoop(provider, srv.url, durablePipeline(store), { history: prompt(provider, 'Tidy the notes'), turn });
  return { srv, loop };
}

describe.each(PROVIDERS)('%s: a durable loop', (provider) => {
  it('suspends with the pending approval and a continuation; continued from a fresh pipeline, the next request carries every result in order', async () => {
    const store = memoryJournal();
    const { srv, loop } = await suspendedLoop(provider, store, 'conv-a');
    expect(loop.outcome).toBe('suspended');
    expect(loop.step).toBe(1);
    expect(loop.steps[0]!.results.map((r) => [r.id, r.status])).toEqual([['call_r1', 'ok'], ['call_w1', 'suspended'], ['call_r2', 'suspended']]);
    expect(loop.pending.map((p) => [p.turn, p.callId, p.tool])).toEqual([['conv-a/1', 'call_w1', 'write_note']]);
    expect(loop.messages).toEqual(prompt(provider, 'Tidy the notes')); // nothing appended until every call is answered
    expect(loop.continuation).toMatchObject({ v: 1, provider, turn: 'conv-a/1', step: 1 });
    expect(srv.requests).toHaveLength(1);

    // What a browser would send back: JSON, through a fresh pipeline on the same store and secret.
    const continuation: unknown = JSON.parse(JSON.stringify(loop.continuation));
    const answers = [{ token: loop.pending[0]!.token, answer: 'allowed-once' as const }];
    const before = written.length;
    const next = await runLoop(provider, srv.url, durablePipeline(store), { history: loop.messages, turn: 'conv-a', continuation, answers });
    expect(next.outcome).toBe('done');
    expect(next.step).toBe(2);
    expect(written.slice(before)).toEqual(['b.md']);
    expect(srv.requests).toHaveLength(2);
    expect(historyOf(provider, srv.requests[1]!.body)).toEqual(EXPECTED);

    // The same continuation again: refused, nothing runs, nothing is sent to the model.
    const again = runLoop(provider, srv.url, durablePipeline(store), { history: loop.messages, turn: 'conv-a', continuation, answers });
    await expect(again).rejects.toBeInstanceOf(ContinuationError);
    await expect(again).rejects.toMatchObject({ code: 'continuation_used' });
    expect(srv.requests).toHaveLength(2);
    expect(written.slice(before)).toEqual(['b.md']);
  });

  it('refuses an altered or forged continuation, and one of another provider, before anything runs', async () => {
    const store = memoryJournal();
    const { srv, loop } = await suspendedLoop(provider, store, 'conv-b');
    const answers = [{ token: loop.pending[0]!.token, answer: 'allowed-once' as const }];
    const good = loop.continuation!;
    const other = PROVIDERS.find((p) => p !== provider)!;
    const tries: [unknown, string][] = [
      [{ ...good, step: 5 }, 'continuation_forged'],
      [{ ...good, turn: 'conv-other/1' }, 'continuation_forged'],
      [{ ...good, sig: good.sig.slice(1) + 'A' }, 'continuation_forged'],
      [{ ...good, v: 2 }, 'continuation_malformed'],
      ['not a continuation', 'continuation_malformed'],
    ];
    for (const [continuation, code] of tries) {
      await expect(runLoop(provider, srv.url, durablePipeline(store), { history: loop.messages, continuation, answers }), code).rejects.toMatchObject({ code });
    }
    // Signed by another secret: the same fields, another pipeline's secret.
    const foreign = { ...good, sig: undefined };
    await expect(runLoop(provider, srv.url, durablePipeline(store), { history: [], continuation: foreign, answers })).rejects.toMatchObject({ code: 'continuation_malformed' });
    await expect(runLoop(provider, srv.url, durablePipeline(store), { history: [], continuation: good, answers, secret: 'another-secret-'.padEnd(40, 'y') })).rejects.toMatchObject({ code: 'continuation_forged' });
    // Another provider's loop, and a pipeline on another store.
    await expect(runLoop(other, srv.url, durablePipeline(store), { history: [], continuation: good, answers })).rejects.toMatchObject({ code: 'continuation_wrong_provider' });
    await expect(runLoop(provider, srv.url, durablePipeline(memoryJournal()), { history: [], continuation: good, answers })).rejects.toMatchObject({ code: 'continuation_wrong_pipeline' });
    expect(srv.requests).toHaveLength(1);
    // None of them consumed it: the genuine one still goes on.
    const next = await runLoop(provider, srv.url, durablePipeline(store), { history: loop.messages, continuation: good, answers });
    expect(next.outcome).toBe('done');
    expect(historyOf(provider, srv.requests[1]!.body)).toEqual(EXPECTED);
  });

  it('a turn another process holds is an outcome: nothing runs, nothing is sent; a fresh continuation goes on once it is free', async () => {
    const store = memoryJournal();
    const { srv, loop } = await suspendedLoop(provider, store, 'conv-c');
    const answers = [{ token: loop.pending[0]!.token, answer: 'allowed-once' as const }];
    const epoch = (await store.acquire('conv-c/1', 'another process', 60_000))!;
    const before = written.length;
    const leased = await runLoop(provider, srv.url, durablePipeline(store), { history: loop.messages, turn: 'conv-c', continuation: loop.continuation, answers });
    expect(leased.outcome).toBe('turn_leased');
    expect(leased.messages).toEqual(loop.messages);
    expect(leased.continuation).toMatchObject({ turn: 'conv-c/1', step: 1 });
    expect(leased.continuation!.nonce).not.toBe(loop.continuation!.nonce);
    expect(written.length).toBe(before);
    expect(srv.requests).toHaveLength(1);

    await store.release({ turn: 'conv-c/1', owner: 'another process', epoch });
    const next = await runLoop(provider, srv.url, durablePipeline(store), { history: leased.messages, turn: 'conv-c', continuation: leased.continuation, answers });
    expect(next.outcome).toBe('done');
    expect(historyOf(provider, srv.requests[1]!.body)).toEqual(EXPECTED);
  });

  it('a first step whose turn another process holds is turn_leased: nothing runs, and the loop requests nothing more', async () => {
    const store = memoryJournal();
    await store.acquire('conv-f/1', 'another process', 60_000);
    const srv = await script(provider, [{ calls: CALLS }, { text: 'never requested' }]);
    const before = written.length;
    const loop = await runLoop(provider, srv.url, durablePipeline(store), { history: prompt(provider, 'go'), turn: 'conv-f' });
    expect([loop.outcome, loop.step, loop.steps[0]!.results, loop.continuation, written.length - before]).toEqual(['turn_leased', 1, [], undefined, 0]);
    expect(srv.requests).toHaveLength(1);
  });

  it('a turn taken over while it runs is an outcome (lease_lost) with what ran, and nothing is sent to the model', async () => {
    const store = new StolenStore(memoryJournal());
    const { srv, loop } = await suspendedLoop(provider, store, 'conv-d');
    const answers = [{ token: loop.pending[0]!.token, answer: 'allowed-once' as const }];
    // The write's body runs; meanwhile another process takes the turn over: its result cannot be journaled.
    onWrite.hook = () => store.takeOver();
    try {
      const lost = await runLoop(provider, srv.url, durablePipeline(store), { history: loop.messages, continuation: loop.continuation, answers });
      expect(lost.outcome).toBe('lease_lost');
      expect(lost.steps[0]!.outcome).toBe('lease_lost');
      // What ran under this process's lease before it was taken: the first read, replayed from the journal.
      expect(lost.steps[0]!.results.map((r) => [r.id, r.status])).toEqual([['call_r1', 'ok']]);
      expect(lost.continuation).toMatchObject({ turn: 'conv-d/1', step: 1 });
      expect(lost.messages).toEqual(loop.messages);
    } finally {
      onWrite.hook = undefined;
    }
    expect(srv.requests).toHaveLength(1);
  });
});

describe.each(PROVIDERS)('%s: the step limit and stop conditions', (provider) => {
  const reading = (n: number) => ({ calls: [{ id: `call_s${n}`, name: 'read_note', args: { path: `${n}.md` } }] });
  const plain = () => createPipeline({ tools: [readNote] });

  it('stops at maxSteps without another request', async () => {
    const srv = await script(provider, [reading(1), reading(2), reading(3)]);
    const loop = await runLoop(provider, srv.url, plain(), { history: prompt(provider, 'go'), maxSteps: 2 });
    expect([loop.outcome, loop.step, srv.requests.length]).toEqual(['max_steps', 2, 2]);
    // The last step's results are in the conversation, ready for a later request.
    expect(historyOf(provider, { [provider === 'openai-responses' ? 'input' : 'messages']: loop.messages }).filter((s) => s.kind === 'result').map((s) => s.id)).toEqual(['call_s1', 'call_s2']);
  });

  it('stops when a stop condition holds: stepCountIs, hasToolCall, or a predicate', async () => {
    const srv = await script(provider, [reading(1), { calls: [{ id: 'call_f', name: 'read_note', args: { path: 'final.md' } }] }, reading(3), reading(4)]);
    const byCount = await runLoop(provider, srv.url, plain(), { history: prompt(provider, 'go'), stopWhen: stepCountIs(1) });
    expect([byCount.outcome, byCount.step, srv.requests.length]).toEqual(['stopped', 1, 1]);
    // A new loop (no continuation) counts from 1 again.
    const seen: number[] = [];
    const byTool = await runLoop(provider, srv.url, plain(), {
      history: byCount.messages,
      stopWhen: [({ step }) => (seen.push(step), false), hasToolCall('read_note')],
    });
    expect([byTool.outcome, byTool.step, srv.requests.length, seen]).toEqual(['stopped', 1, 2, [1]]);
    const byPredicate = await runLoop(provider, srv.url, plain(), { history: byTool.messages, stopWhen: [hasToolCall('write_note'), stepCountIs(2)] });
    expect([byPredicate.outcome, byPredicate.step, srv.requests.length]).toEqual(['stopped', 2, 4]);
  });

  it('counts steps across a continuation: re-entered at the limit, it finishes the turn and requests nothing more', async () => {
    const store = memoryJournal();
    const { srv, loop } = await suspendedLoop(provider, store, 'conv-e');
    const answers = [{ token: loop.pending[0]!.token, answer: 'rejected' as const }];
    const next = await runLoop(provider, srv.url, durablePipeline(store), { history: loop.messages, turn: 'conv-e', continuation: loop.continuation, answers, maxSteps: 1 });
    expect([next.outcome, next.step, srv.requests.length]).toEqual(['max_steps', 1, 1]);
    expect(historyOf(provider, { [provider === 'openai-responses' ? 'input' : 'messages']: next.messages }).map((s) => [s.kind, s.id])).toEqual(EXPECTED.map((s) => [s.kind, s.id]));
  });
});
