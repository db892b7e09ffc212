import Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { continueAnthropicTurn, runAnthropicTurn } from '../../../src/adapters/anthropic/index.js';
import { ContinuationError } from '../../../src/adapters/loop/index.js';
import { continueOpenAIChatTurn, continueOpenAIResponsesTurn, runOpenAIChatTurn, runOpenAIResponsesTurn } from '../../../src/adapters/openai/index.js';
import { memoryJournal, type ApprovalResponse, type JournalStore, type Pipeline } from '../../../src/index.js';
import { startReplayServer, type ReplayServer } from '../../support/replayServer.js';
import { durablePipeline, written } from './fixture.js';
import { historyOf, PATHS, PROVIDERS, sseOf, type Provider, type ScriptCall } from './wire.js';

// One turn at a time (no loop): on a journaled pipeline, run…Turn({ turn }) resolves with a
// suspended outcome — the results so far, the pending approvals, a continuation — where it used to
// reject with turn_suspended; continue…Turn gives back the messages that answer every call.

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The provider's lone turn functions, with its SDK client's stream of the server's next response. */
function turnsOf(provider: Provider, url: string) {
  if (provider === 'anthropic') {
    const client = new Anthropic({ baseURL: url, apiKey: 'test-key', maxRetries: 0 });
    return {
      run: async (pipeline: Pipeline, turn: string) =>
        runAnthropicTurn(pipeline, await client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'go' }], stream: true }), { turn }),
      continue: (pipeline: Pipeline, continuation: unknown, answers: readonly ApprovalResponse[]) => continueAnthropicTurn(pipeline, continuation, { answers }),
      sent: (messages: readonly unknown[]) => ({ messages }),
    };
  }
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'test-key', maxRetries: 0 });
  if (provider === 'openai-chat') {
    return {
      run: async (pipeline: Pipeline, turn: string) => runOpenAIChatTurn(pipeline, await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'go' }], stream: true }), { turn }),
      continue: (pipeline: Pipeline, continuation: unknown, answers: readonly ApprovalResponse[]) => continueOpenAIChatTurn(pipeline, continuation, { answers }),
      sent: (messages: readonly unknown[]) => ({ messages }),
    };
  }
  return {
    run: async (pipeline: Pipeline, turn: string) => {
      const turned = await runOpenAIResponsesTurn(pipeline, await client.responses.create({ model: 'm', input: 'go', stream: true }), { turn });
      return { ...turned, messages: turned.items };
    },
    continue: async (pipeline: Pipeline, continuation: unknown, answers: readonly ApprovalResponse[]) => {
      const turned = await continueOpenAIResponsesTurn(pipeline, continuation, { answers });
      return { ...turned, messages: turned.items };
    },
    sent: (input: readonly unknown[]) => ({ input }),
  };
}

const CALLS: readonly ScriptCall[] = [
  { id: 'call_r1', name: 'read_note', args: { path: 'a.md' } },
  { id: 'call_w1', name: 'write_note', args: { path: 'b.md', text: 'hi' } },
  { id: 'call_r2', name: 'read_note', args: { path: 'c.md' } },
];

describe.each(PROVIDERS)('%s: one durable turn', (provider) => {
  it('resolves suspended with the results so far, the pending approval and a continuation; continued, it answers every call in order', async () => {
    server = await startReplayServer([{ path: PATHS[provider], sse: sseOf(provider, { text: 'On it.', calls: CALLS }) }]);
    const turns = turnsOf(provider, server.url);
    const store = memoryJournal();
    const turn = await turns.run(durablePipeline(store), 'lone-1');
    expect(turn.outcome).toBe('suspended');
    expect(turn.done).toBe(false);
    expect(turn.results.map((r) => [r.id, r.status])).toEqual([['call_r1', 'ok'], ['call_w1', 'suspended'], ['call_r2', 'suspended']]);
    expect(turn.pending.map((p) => p.callId)).toEqual(['call_w1']);
    expect(turn.messages).toEqual([]);
    expect(turn.text).toBe('On it.');

    // Continued without an answer: still suspended, with a fresh continuation.
    const waiting = await turns.continue(durablePipeline(store), JSON.parse(JSON.stringify(turn.continuation)), []);
    expect([waiting.outcome, waiting.pending.map((p) => p.callId)]).toEqual(['suspended', ['call_w1']]);
    // An answer for no approval this turn waits for: refused before anything runs, with a fresh continuation.
    const stale = turns.continue(durablePipeline(store), waiting.continuation, [{ token: 'x.y', answer: 'allowed-once' }]);
    await expect(stale).rejects.toMatchObject({ code: 'answer_not_pending' });
    const { continuation } = (await stale.catch((error: unknown) => error)) as ContinuationError;

    const next = await turns.continue(durablePipeline(store), continuation, [{ token: waiting.pending[0]!.token, answer: 'allowed-once' }]);
    expect(next.outcome).toBe('next');
    expect(next.text).toBe('On it.');
    expect(historyOf(provider, turns.sent(next.messages))).toEqual([
      ...CALLS.map((call) => ({ kind: 'call', id: call.id })),
      { kind: 'result', id: 'call_r1', content: 'contents of a.md' },
      { kind: 'result', id: 'call_w1', content: 'wrote 2 characters to b.md' },
      { kind: 'result', id: 'call_r2', content: 'contents of c.md' },
    ]);
  });
});

describe('two submits of one continuation at once', () => {
  it.each(PROVIDERS)('%s: one goes on, the other is refused with continuation_used; the write runs once', async (provider) => {
    server = await startReplayServer([{ path: PATHS[provider], sse: sseOf(provider, { calls: CALLS }) }]);
    const turns = turnsOf(provider, server.url);
    const store = memoryJournal();
    const turn = await turns.run(durablePipeline(store), 'twice');
    const answers = [{ token: turn.pending[0]!.token, answer: 'allowed-once' as const }];
    const before = written.length;
    const settled = await Promise.allSettled([turns.continue(durablePipeline(store), turn.continuation, answers), turns.continue(durablePipeline(store), turn.continuation, answers)]);
    const outcomes = settled.map((s) => (s.status === 'fulfilled' ? s.value.outcome : (s.reason as ContinuationError).code)).sort();
    expect(outcomes).toEqual(['continuation_used', 'next']);
    expect(written.length - before).toBe(1);
  });
});

describe('property: whatever calls suspend and however they are answered, the continued turn answers each call once, in order', () => {
  const call = fc.record({ write: fc.boolean(), answer: fc.constantFrom('allowed-once' as const, 'rejected' as const, undefined) });
  it('holds for every provider', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROVIDERS), fc.array(call, { minLength: 1, maxLength: 6 }), async (provider, specs) => {
        const calls: ScriptCall[] = specs.map((spec, i) =>
          spec.write ? { id: `call_${i}`, name: 'write_note', args: { path: `${i}.md`, text: 'x'.repeat(i) } } : { id: `call_${i}`, name: 'read_note', args: { path: `${i}.md` } },
        );
        server = await startReplayServer([{ path: PATHS[provider], sse: sseOf(provider, { calls }) }], 0);
        try {
          const turns = turnsOf(provider, server.url);
          const store: JournalStore = memoryJournal();
          let turn = await turns.run(durablePipeline(store), 'prop');
          // Answer what the specs answer, then (second round) everything still pending.
          for (let round = 0; turn.outcome === 'suspended' && round < 3; round++) {
            const answers = turn.pending.flatMap((p): ApprovalResponse[] => {
              const answer = specs[Number(p.callId.slice('call_'.length))]!.answer ?? (round > 0 ? 'rejected' : undefined);
              return answer === undefined ? [] : [{ token: p.token, answer }];
            });
            turn = await turns.continue(durablePipeline(store), turn.continuation, answers);
          }
          expect(turn.outcome).toBe(calls.length > 0 ? 'next' : 'done');
          const history = historyOf(provider, turns.sent(turn.messages));
          expect(history.map((s) => [s.kind, s.id])).toEqual([...calls.map((c) => ['call', c.id]), ...calls.map((c) => ['result', c.id])]);
          for (const [i, step] of history.filter((s) => s.kind === 'result').entries()) {
            const spec = specs[i]!;
            if (!spec.write) expect(step.content).toBe(`contents of ${i}.md`);
          }
        } finally {
          await server.close();
          server = undefined;
        }
      }),
      { numRuns: 20 },
    );
  }, 120_000);
});
