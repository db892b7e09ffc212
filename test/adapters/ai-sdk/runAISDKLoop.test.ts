import { isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, readUIMessageStream, streamText, type ModelMessage, type UIMessage, type UIMessageChunk } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { continuationOf, hasToolCall, runAISDKLoop, stepCountIs, toAISDKTools } from '../../../src/adapters/ai-sdk/index.js';
import { issueContinuation } from '../../../src/adapters/loop/index.js';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type JournalStore } from '../../../src/index.js';
import { deferred } from '../../support/deferred.js';
import { sendWhenApproved } from '../../../examples/agents/ai-sdk-page.js';
import { conversation, finish, type ModelPart } from './helpers.js';

const SECRET = 'a test secret that is long enough to sign with';

function counted() {
  const runs: string[] = [];
  const read = defineTool({ name: 'read', description: 'Read', input: z.object({ path: z.string() }), mode: 'parallel', execute: ({ path }) => (runs.push(`read ${path}`), `text of ${path}`) });
  const write = defineTool({ name: 'write', description: 'Write', input: z.object({ path: z.string() }), execute: ({ path }) => (runs.push(`write ${path}`), `wrote ${path}`) });
  const answer = defineTool({ name: 'final_answer', description: 'Answer', input: z.object({ text: z.string() }), mode: 'parallel', execute: ({ text }) => text });
  return { runs, tools: [read, write, answer] };
}

const durable = (journal: JournalStore, tools: ReturnType<typeof counted>['tools']) =>
  createPipeline({ tools, journal, approvalSecret: SECRET, pre: [askTools(['write'])], approve: suspendApprovals() });

/** A model that calls `read` with a fresh path on every request (never done), recording the prompts. */
function endlessReader(extra: (n: number) => ModelPart[] = () => []) {
  const prompts: { role: string; content: { type: string; toolCallId?: string }[] }[][] = [];
  const model = new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      prompts.push(prompt as never);
      const n = prompts.length;
      const parts: ModelPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'tool-call', toolCallId: `c${n}`, toolName: 'read', input: JSON.stringify({ path: `f${n}` }) },
        ...extra(n),
        finish('tool-calls'),
      ];
      return { stream: new ReadableStream<ModelPart>({ start: (c) => (parts.forEach((p) => c.enqueue(p)), c.close()) }) };
    },
  });
  return { model, prompts };
}

const text = (words: string): ModelPart[] => [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: words }, { type: 'text-end', id: 't' }];

describe('runAISDKLoop', () => {
  it('maxSteps: the model never stops calling tools; the loop stops after the limit, every call answered', async () => {
    const { tools, runs } = counted();
    const pipeline = createPipeline({ tools });
    const { model, prompts } = endlessReader();
    const loop = await runAISDKLoop(pipeline, { messages: [{ role: 'user', content: 'Go.' }], request: (messages) => streamText({ model, tools: toAISDKTools(pipeline), messages }), maxSteps: 3 });
    expect(loop.outcome).toBe('max_steps');
    expect(prompts).toHaveLength(3);
    expect(runs).toEqual(['read f1', 'read f2', 'read f3']);
    expect(loop.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool']);
    expect(loop.steps.map((s) => s.step)).toEqual([1, 2, 3]);
  });

  it('stopWhen: stepCountIs and hasToolCall, as the AI SDK names them, stop after an answered step', async () => {
    const { tools } = counted();
    const pipeline = createPipeline({ tools });
    const counting = endlessReader();
    const two = await runAISDKLoop(pipeline, { messages: [{ role: 'user', content: 'Go.' }], request: (messages) => streamText({ model: counting.model, tools: toAISDKTools(pipeline), messages }), stopWhen: stepCountIs(2) });
    expect([two.outcome, two.step, counting.prompts.length]).toEqual(['stopped', 2, 2]);

    const answering = endlessReader((n) => (n === 2 ? [{ type: 'tool-call', toolCallId: 'fa', toolName: 'final_answer', input: '{"text":"42"}' }] : []));
    const loop = await runAISDKLoop(pipeline, {
      messages: [{ role: 'user', content: 'Go.' }],
      request: (messages) => streamText({ model: answering.model, tools: toAISDKTools(pipeline), messages }),
      stopWhen: [stepCountIs(10), hasToolCall('final_answer')],
    });
    expect([loop.outcome, loop.step, answering.prompts.length]).toEqual(['stopped', 2, 2]);
    expect(loop.steps.at(-1)!.results.map((r) => r.name)).toEqual(['read', 'final_answer']);
  });

  it('suspends on a write, then a fresh pipeline re-enters with the answer: the next request carries every result in order', async () => {
    const journal = memoryJournal();
    const a = counted();
    const script: ModelPart[][] = [
      [{ type: 'stream-start', warnings: [] }, { type: 'tool-call', toolCallId: 'r1', toolName: 'read', input: '{"path":"a"}' }, finish('tool-calls')],
      [
        { type: 'stream-start', warnings: [] },
        { type: 'tool-call', toolCallId: 'w1', toolName: 'write', input: '{"path":"b"}' },
        { type: 'tool-call', toolCallId: 'r2', toolName: 'read', input: '{"path":"c"}' },
        finish('tool-calls'),
      ],
      [{ type: 'stream-start', warnings: [] }, ...text('Done.'), finish('stop')],
    ];
    const { model, prompts } = conversation(script);
    const request = (messages: ModelMessage[]) => streamText({ model, tools: toAISDKTools(a.tools), messages });
    const chunks: UIMessageChunk[] = [];
    const first = await runAISDKLoop(durable(journal, a.tools), { messages: [{ role: 'user', content: 'Go.' }], request, turn: 'chat-1', writer: { write: (c) => chunks.push(c) } });

    expect(first.outcome).toBe('suspended');
    expect(first.step).toBe(2);
    expect(a.runs).toEqual(['read a']);
    expect(prompts).toHaveLength(2); // nothing sent to the model after the suspension
    const token = first.pending[0]!.token;
    expect(chunks.filter((c) => c.type === 'tool-approval-request')).toEqual([{ type: 'tool-approval-request', approvalId: token, toolCallId: 'w1' }]);
    expect(chunks.at(-1)).toEqual({ type: 'message-metadata', messageMetadata: { toolstream: { outcome: 'suspended', continuation: first.continuation } } });
    // As the page folds the stream: the write asks; the read after it waits (no output yet).
    let page: UIMessage | undefined;
    const stream = new ReadableStream<UIMessageChunk>({ start: (c) => (chunks.forEach((chunk) => c.enqueue(chunk)), c.close()) });
    for await (const message of readUIMessageStream({ stream })) page = message;
    expect(page!.parts.filter(isToolUIPart).map((p) => [p.toolCallId, p.state])).toEqual([['r1', 'output-available'], ['w1', 'approval-requested'], ['r2', 'input-available']]);
    // addToolApprovalResponse: the SDK's own auto-send test waits for r2; the page's sendWhenApproved does not.
    const answered: UIMessage = { ...page!, parts: page!.parts.map((p) => (isToolUIPart(p) && p.toolCallId === 'w1' ? ({ ...p, state: 'approval-responded', approval: { id: token, approved: true } } as typeof p) : p)) };
    expect(lastAssistantMessageIsCompleteWithApprovalResponses({ messages: [answered] })).toBe(false);
    expect(sendWhenApproved({ messages: [answered] })).toBe(true);
    expect(sendWhenApproved({ messages: [page!] })).toBe(false); // nothing answered yet
    // The page keeps the metadata on the assistant message and sends it back.
    const carried = continuationOf([{ id: 'm1', role: 'assistant', parts: [], metadata: (chunks.at(-1) as { messageMetadata: unknown }).messageMetadata }]);
    expect(carried).toEqual(first.continuation);

    const b = counted(); // another process
    const history: ModelMessage[] = [...first.messages, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: token, approved: true }] }];
    const second = await runAISDKLoop(durable(journal, b.tools), { messages: history, request, turn: 'chat-1', continuation: JSON.parse(JSON.stringify(carried)) });
    expect(second.outcome).toBe('done');
    expect(b.runs).toEqual(['write b', 'read c']);
    expect(second.steps.map((s) => [s.step, s.outcome])).toEqual([[2, 'next'], [3, 'done']]);
    const third = prompts[2] as { role: string; content: { type: string; toolCallId?: string }[] }[];
    expect(third.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(third.filter((m) => m.role === 'tool').map((m) => m.content.map((p) => p.toolCallId))).toEqual([['r1'], ['w1', 'r2']]);
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
  });

  it('turn_leased: re-entered while another process drives the step, the loop stops and never calls the model', async () => {
    const journal = memoryJournal();
    const gate = deferred();
    const started = deferred();
    const slow = defineTool({ name: 'read', description: 'Read', input: z.object({ path: z.string() }), mode: 'parallel', execute: async () => (started.resolve(), await gate.promise, 'text') });
    const holder = createPipeline({ tools: [slow], journal, approvalSecret: SECRET });
    const running = holder.run([{ id: 'r1', name: 'read', args: { path: 'a' } }], { turn: 'chat-1/1' });
    await started.promise;

    const { tools } = counted();
    const pipeline = durable(journal, tools);
    let requests = 0;
    const step: ModelMessage[] = [{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'r1', toolName: 'read', input: { path: 'a' } }] }];
    const loop = await runAISDKLoop(pipeline, {
      messages: [{ role: 'user', content: 'Go.' }, ...step],
      request: () => (requests++, streamText({ model: endlessReader().model, tools: toAISDKTools(tools), prompt: 'x' })),
      turn: 'chat-1',
      continuation: issueContinuation(pipeline, { provider: 'ai-sdk', turn: 'chat-1/1', step: 1, state: { toolCallIds: ['r1'] } }),
    });
    expect(loop.outcome).toBe('turn_leased');
    expect(requests).toBe(0);
    expect(loop.messages).toEqual([{ role: 'user', content: 'Go.' }, ...step]); // as given: submit again later
    expect(loop.continuation).toMatchObject({ turn: 'chat-1/1', step: 1 });
    gate.resolve();
    await running;
  });
});
