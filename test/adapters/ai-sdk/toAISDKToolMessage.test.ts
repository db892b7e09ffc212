import { generateText, streamText, type ModelMessage, type ToolModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { fromAISDKStream, toAISDKToolMessage } from '../../../src/adapters/ai-sdk/index.js';
import { createPipeline, defineTool, denyTools, type ToolResult } from '../../../src/index.js';
import { finish, modelOf, recordingTools, sdkToolsOf, usage } from './helpers.js';

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  mode: 'parallel',
  execute: ({ a, b }) => a + b,
});
const slow = defineTool({
  name: 'slow',
  description: 'Wait',
  input: z.object({}),
  mode: 'parallel',
  execute: (_args, { signal }) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, 5_000, 'late');
      signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    }),
});
const boom = defineTool({
  name: 'boom',
  description: 'Fail',
  input: z.object({}),
  mode: 'parallel',
  execute: async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    throw new Error('disk full');
  },
});
const danger = defineTool({ name: 'danger', description: 'Never allowed', input: z.object({}), execute: () => 'ran' });

describe('toAISDKToolMessage', () => {
  it('maps every status to its v6 output, in the order given', async () => {
    const pipeline = createPipeline({ tools: [add, slow, boom, danger], pre: [denyTools(['danger'], 'not here')], onError: 'cancel-rest' });
    const results = await pipeline.run([
      { id: 'c1', name: 'add', args: '{"a":1,"b":2}' },
      { id: 'c2', name: 'danger', args: {} },
      { id: 'c3', name: 'slow', args: {} },
      { id: 'c4', name: 'boom', args: {} },
      { id: 'c5', name: 'nope', args: {} },
    ]);
    expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
      ['c1', 'ok', undefined],
      ['c2', 'denied', 'denied'],
      ['c3', 'cancelled', 'cancelled'],
      ['c4', 'error', 'tool_error'],
      ['c5', 'error', 'unknown_tool'],
    ]);
    const content = (id: string) => results.find((r) => r.id === id)!.content;

    expect(toAISDKToolMessage(results)).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'add', output: { type: 'text', value: '3' } },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'danger', output: { type: 'execution-denied', reason: content('c2') } },
        { type: 'tool-result', toolCallId: 'c3', toolName: 'slow', output: { type: 'error-text', value: content('c3') } },
        { type: 'tool-result', toolCallId: 'c4', toolName: 'boom', output: { type: 'error-text', value: content('c4') } },
        { type: 'tool-result', toolCallId: 'c5', toolName: 'nope', output: { type: 'error-text', value: content('c5') } },
      ],
    });
    expect(content('c2')).toContain('not here');
    expect(content('c4')).toContain('disk full');
    expect(content('c5')).toContain('Unknown tool "nope"');
  });

  it('an empty batch gives an empty tool message', () => {
    expect(toAISDKToolMessage([])).toEqual({ role: 'tool', content: [] });
  });

  it('is typed as the SDK tool message, which is a ModelMessage', () => {
    expectTypeOf(toAISDKToolMessage).parameter(0).toEqualTypeOf<readonly ToolResult[]>();
    expectTypeOf(toAISDKToolMessage).returns.toEqualTypeOf<ToolModelMessage>();
    expectTypeOf(toAISDKToolMessage).returns.toExtend<ModelMessage>();
    const messages: ModelMessage[] = [toAISDKToolMessage([])];
    expect(messages).toHaveLength(1);
  });

  it('round trip: the results go into the messages of the next generateText and streamText calls', async () => {
    const { tools } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    const sdkTools = sdkToolsOf(tools);
    const first = streamText({
      model: modelOf([
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: '{"path":"a.txt"}' },
        { type: 'tool-call', toolCallId: 'call_2', toolName: 'add', input: '{"a":1,"b":"x"}' },
        finish('tool-calls'),
      ]),
      tools: sdkTools,
      prompt: 'Read a.txt and add.',
    });
    const results = await pipeline.run(fromAISDKStream(first.fullStream));
    const { messages: response } = await first.response;

    const messages: ModelMessage[] = [
      { role: 'user', content: 'Read a.txt and add.' },
      ...response,
      toAISDKToolMessage(results),
    ];

    const expectedToolPrompt = {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call_1', toolName: 'read_file', output: { type: 'text', value: 'contents of a.txt' } },
        { type: 'tool-result', toolCallId: 'call_2', toolName: 'add', output: { type: 'error-text', value: results[1]!.content } },
      ],
    };

    const generating = new MockLanguageModelV3({
      doGenerate: {
        content: [{ type: 'text', text: 'a.txt says hi; the sum failed.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      },
    });
    const second = await generateText({ model: generating, tools: sdkTools, messages });
    expect(second.text).toBe('a.txt says hi; the sum failed.');
    const prompt = generating.doGenerateCalls[0]!.prompt;
    expect(prompt.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(prompt[2]).toMatchObject(expectedToolPrompt);

    const streaming = modelOf([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'done' },
      { type: 'text-end', id: 't' },
      finish('stop'),
    ]);
    const third = streamText({ model: streaming, tools: sdkTools, messages });
    expect(await third.text).toBe('done');
    expect(streaming.doStreamCalls[0]!.prompt[2]).toMatchObject(expectedToolPrompt);
  });

  it('a denied result reaches the model as execution-denied with its reason', async () => {
    const pipeline = createPipeline({ tools: [danger], pre: [denyTools(['danger'], 'never in tests')] });
    const results = await pipeline.run([{ id: 'd1', name: 'danger', args: {} }]);
    const generating = new MockLanguageModelV3({
      doGenerate: { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
    });
    await generateText({
      model: generating,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'd1', toolName: 'danger', input: {} }] },
        toAISDKToolMessage(results),
      ],
    });
    expect(generating.doGenerateCalls[0]!.prompt[2]).toMatchObject({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'd1',
          toolName: 'danger',
          output: { type: 'execution-denied', reason: expect.stringContaining('never in tests') },
        },
      ],
    });
  });
});
