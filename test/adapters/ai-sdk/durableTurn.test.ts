import { streamText, type ModelMessage, type ToolApprovalRequest } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { continueAISDKTurn, runAISDKTurn, toAISDKToolOutputChunks, toAISDKTools } from '../../../src/adapters/ai-sdk/index.js';
import { ContinuationError, issueContinuation } from '../../../src/adapters/loop/index.js';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type JournalStore } from '../../../src/index.js';
import { deferred } from '../../support/deferred.js';
import { conversation, finish, type ModelPart } from './helpers.js';

const SECRET = 'a test secret that is long enough to sign with';

/** `read` (parallel) and `write` (exclusive, asks a human), counting what their bodies ran. */
function counted(gate?: Promise<void>) {
  const runs: string[] = [];
  const read = defineTool({
    name: 'read', description: 'Read a file', input: z.object({ path: z.string() }), mode: 'parallel',
    execute: async ({ path }) => (runs.push(`read ${path}`), await gate, `text of ${path}`),
  });
  const write = defineTool({ name: 'write', description: 'Write a file', input: z.object({ path: z.string() }), execute: ({ path }) => (runs.push(`write ${path}`), `wrote ${path}`) });
  return { runs, tools: [read, write] };
}

const pipelineOf = (journal: JournalStore, tools: ReturnType<typeof counted>['tools']) =>
  createPipeline({ tools, journal, approvalSecret: SECRET, pre: [askTools(['write'])], approve: suspendApprovals() });

const modelOf = conversation;

const call = (toolCallId: string, toolName: string, path: string): ModelPart => ({ type: 'tool-call', toolCallId, toolName, input: JSON.stringify({ path }) });
/** read a, write b, read c: the write asks; the read behind it (an exclusive write is a barrier) waits. */
const stepWithWrite: ModelPart[] = [{ type: 'stream-start', warnings: [] }, call('r1', 'read', 'a'), call('w1', 'write', 'b'), call('r2', 'read', 'c'), finish('tool-calls')];
const outline = (results: readonly { id: string; status: string; error?: { code: string } | undefined }[]) => results.map((r) => `${r.id} ${r.status}${r.error ? ` ${r.error.code}` : ''}`);
const approved = (approvalId: string, ok = true): ModelMessage => ({ role: 'tool', content: [{ type: 'tool-approval-response', approvalId, approved: ok }] });

describe('runAISDKTurn on a durable turn', () => {
  it('suspends instead of rejecting: the results so far, the approval as the SDK\'s own part, a continuation', async () => {
    const { tools, runs } = counted();
    const pipeline = pipelineOf(memoryJournal(), tools);
    const { model } = modelOf([stepWithWrite]);
    const turn = await runAISDKTurn(pipeline, streamText({ model, tools: toAISDKTools(pipeline), prompt: 'Go.' }), { turn: 'chat-1/1' });

    expect(turn.outcome).toBe('suspended');
    expect(turn.done).toBe(false);
    expect(outline(turn.results)).toEqual(['r1 ok', 'w1 suspended approval_pending', 'r2 suspended behind_suspended']);
    expect(runs).toEqual(['read a']);
    expect(turn.pending.map((p) => [p.callId, p.tool])).toEqual([['w1', 'write']]);
    const [assistant, tool] = turn.messages;
    const requests = (assistant?.content as { type: string }[]).filter((part): part is ToolApprovalRequest => part.type === 'tool-approval-request');
    expect(requests).toEqual([{ type: 'tool-approval-request', approvalId: turn.pending[0]!.token, toolCallId: 'w1' }]);
    expect(tool).toEqual({ role: 'tool', content: [expect.objectContaining({ toolCallId: 'r1', output: { type: 'text', value: 'text of a' } })] });
    expect(turn.continuation).toMatchObject({ v: 1, provider: 'ai-sdk', turn: 'chat-1/1', step: 1, state: { toolCallIds: ['r1', 'w1', 'r2'] } });
    // The UI stream: r1's output, w1's approval request, nothing for r2 (it waits).
    expect(toAISDKToolOutputChunks(turn.results)).toEqual([
      { type: 'tool-output-available', toolCallId: 'r1', output: 'text of a' },
      { type: 'tool-approval-request', approvalId: turn.pending[0]!.token, toolCallId: 'w1' },
    ]);
  });

  it('a fresh pipeline goes on with the approval response in the history: every result, in model order, once', async () => {
    const journal = memoryJournal();
    const first = counted();
    const { model, prompts } = modelOf([stepWithWrite, [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Done.' }, { type: 'text-end', id: 't' }, finish('stop')]]);
    const suspended = await runAISDKTurn(pipelineOf(journal, first.tools), streamText({ model, tools: toAISDKTools(first.tools), prompt: 'Go.' }), { turn: 'chat-1/1' });
    const history: ModelMessage[] = [{ role: 'user', content: 'Go.' }, ...suspended.messages, approved(suspended.pending[0]!.token)];

    const second = counted(); // another process: nothing in memory
    const later = pipelineOf(journal, second.tools);
    const turn = await continueAISDKTurn(later, JSON.parse(JSON.stringify(suspended.continuation)), history);
    expect(turn.outcome).toBe('next');
    expect(second.runs).toEqual(['write b', 'read c']); // r1 replayed from the journal, never run again
    expect(turn.messages.map((m) => m.role)).toEqual(['assistant', 'tool']);
    expect((turn.messages[0]!.content as { type: string }[]).map((part) => part.type)).toEqual(['tool-call', 'tool-call', 'tool-call']);
    expect(turn.toolMessage?.content.map((part) => part.type === 'tool-result' && [part.toolCallId, part.output])).toEqual([
      ['r1', { type: 'text', value: 'text of a' }],
      ['w1', { type: 'text', value: 'wrote b' }],
      ['r2', { type: 'text', value: 'text of c' }],
    ]);

    // The next request carries every result, as the provider gets it.
    const next = [...history.slice(0, 1), ...turn.messages];
    const done = await runAISDKTurn(later, streamText({ model, tools: toAISDKTools(later), messages: next }), { turn: 'chat-1/2', step: 2 });
    expect(done.outcome).toBe('done');
    const prompt = prompts[1] as { role: string; content: { type: string; toolCallId?: string }[] }[];
    expect(prompt.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(prompt[2]!.content.map((part) => part.toolCallId)).toEqual(['r1', 'w1', 'r2']);

    // Submitted again once it went on: its answers are answered already; refused before anything runs.
    await expect(continueAISDKTurn(later, suspended.continuation, history)).rejects.toMatchObject({ code: 'answer_not_pending' });
    expect(second.runs).toEqual(['write b', 'read c']);
  });

  it('a double submit at once: one goes on, the other is refused, the write runs once', async () => {
    const journal = memoryJournal();
    const { tools, runs } = counted();
    const { model } = modelOf([stepWithWrite]);
    const suspended = await runAISDKTurn(pipelineOf(journal, tools), streamText({ model, tools: toAISDKTools(tools), prompt: 'Go.' }), { turn: 't' });
    const history = [...suspended.messages, approved(suspended.pending[0]!.token)];
    const [one, two] = await Promise.allSettled([
      continueAISDKTurn(pipelineOf(journal, tools), suspended.continuation, history),
      continueAISDKTurn(pipelineOf(journal, tools), suspended.continuation, history),
    ]);
    const settled = [one, two].map((s) => (s.status === 'fulfilled' ? s.value.outcome : (s.reason as ContinuationError).code)).sort();
    expect(settled).toEqual(['continuation_used', 'next']);
    expect(runs).toEqual(['read a', 'write b', 'read c']);
  });

  it('a rejected approval denies the write; the read behind it runs; the UI part is output-denied', async () => {
    const journal = memoryJournal();
    const { tools, runs } = counted();
    const { model } = modelOf([stepWithWrite]);
    const suspended = await runAISDKTurn(pipelineOf(journal, tools), streamText({ model, tools: toAISDKTools(tools), prompt: 'Go.' }), { turn: 't' });
    const turn = await continueAISDKTurn(pipelineOf(journal, tools), suspended.continuation, [...suspended.messages, approved(suspended.pending[0]!.token, false)]);
    expect(outline(turn.results)).toEqual(['r1 ok', 'w1 denied approval_rejected', 'r2 ok']);
    expect(runs).toEqual(['read a', 'read c']);
    expect(toAISDKToolOutputChunks(turn.results)[1]).toEqual({ type: 'tool-output-denied', toolCallId: 'w1' });
  });

  it('a forged approval id, a forged continuation, a history without the step: refused, nothing runs', async () => {
    const journal = memoryJournal();
    const { tools, runs } = counted();
    const { model } = modelOf([stepWithWrite]);
    const suspended = await runAISDKTurn(pipelineOf(journal, tools), streamText({ model, tools: toAISDKTools(tools), prompt: 'Go.' }), { turn: 't' });
    const token = suspended.pending[0]!.token;
    const pipeline = pipelineOf(journal, tools);
    await expect(continueAISDKTurn(pipeline, { ...suspended.continuation, step: 2 }, [...suspended.messages, approved(token)])).rejects.toMatchObject({ code: 'continuation_forged' });
    await expect(continueAISDKTurn(pipeline, suspended.continuation, [{ role: 'user', content: 'hi' }])).rejects.toMatchObject({ code: 'continuation_malformed' });
    const forged = continueAISDKTurn(pipeline, suspended.continuation, [...suspended.messages, approved(`${token.slice(0, -2)}xx`)]);
    await expect(forged).rejects.toBeInstanceOf(ContinuationError);
    await expect(forged).rejects.toMatchObject({ code: 'answer_not_pending' });
    expect(runs).toEqual(['read a']);
    expect(await pipeline.pendingApprovals('t')).toHaveLength(1); // the real approval still waits
    // The continuation was not used up by the forged answer: the page's own answer still goes through.
    const turn = await continueAISDKTurn(pipeline, suspended.continuation, [...suspended.messages, approved(token)]);
    expect(turn.outcome).toBe('next');
    expect(runs).toEqual(['read a', 'write b', 'read c']);
  });

  it('turn_leased: a turn another process drives is an outcome, and nothing runs here', async () => {
    const journal = memoryJournal();
    const gate = deferred();
    const a = counted(gate.promise);
    const { model } = modelOf([[{ type: 'stream-start', warnings: [] }, call('r1', 'read', 'a'), finish('tool-calls')]]);
    const running = runAISDKTurn(pipelineOf(journal, a.tools), streamText({ model, tools: toAISDKTools(a.tools), prompt: 'Go.' }), { turn: 'held' });
    while (a.runs.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));

    const b = counted();
    const other = pipelineOf(journal, b.tools);
    const continuation = issueContinuation(other, { provider: 'ai-sdk', turn: 'held', step: 1, state: { toolCallIds: ['r1'] } });
    const step: ModelMessage[] = [{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'r1', toolName: 'read', input: { path: 'a' } }] }];
    const held = await continueAISDKTurn(other, continuation, step);
    expect(held).toMatchObject({ outcome: 'turn_leased', done: false, results: [], messages: step });
    expect(held.continuation).toMatchObject({ turn: 'held', step: 1 }); // to try again once the holder is done
    expect(b.runs).toEqual([]);
    gate.resolve();
    expect((await running).outcome).toBe('next');
  });
});
