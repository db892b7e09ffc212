import { streamText, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAISDKTurn, toAISDKToolOutputChunks, toAISDKTools } from '../../../src/adapters/ai-sdk/index.js';
import { createPipeline, defineTool, denyTools, IncompleteArguments, toolSchemas } from '../../../src/index.js';
import { conversation, finish, recordingTools, type ModelPart } from './helpers.js';

const say = (id: string, words: string): ModelPart[] => [
  { type: 'text-start', id },
  { type: 'text-delta', id, delta: words },
  { type: 'text-end', id },
];

describe('runAISDKTurn', () => {
  it('a two-step loop: the SDK\'s assistant message, one tool-result per call, then done', async () => {
    const { tools, events } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    const { model, prompts } = conversation([
      [
        { type: 'stream-start', warnings: [] },
        ...say('t1', 'Let me look.'),
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: '{"path":"a.txt"}' },
        { type: 'tool-call', toolCallId: 'call_2', toolName: 'add', input: '{"a":1,"b":2}' },
        finish('tool-calls'),
      ],
      [{ type: 'stream-start', warnings: [] }, ...say('t2', 'a.txt holds its contents; 1 + 2 = 3.'), finish('stop')],
    ]);
    const messages: ModelMessage[] = [{ role: 'user', content: 'Read a.txt and add 1 and 2.' }];

    const first = await runAISDKTurn(pipeline, streamText({ model, tools: toAISDKTools(pipeline), messages }));
    messages.push(...first.messages);
    const last = await runAISDKTurn(pipeline, streamText({ model, tools: toAISDKTools(pipeline), messages }));
    messages.push(...last.messages);

    expect(events.filter((e) => e.endsWith(':start'))).toEqual(['body:call_1:start', 'body:call_2:start']);
    expect(first).toMatchObject({ done: false, text: 'Let me look.' });
    expect(first.messages.map((m) => m.role)).toEqual(['assistant', 'tool']);
    expect(first.toolMessage?.content).toEqual([
      { type: 'tool-result', toolCallId: 'call_1', toolName: 'read_file', output: { type: 'text', value: 'contents of a.txt' } },
      { type: 'tool-result', toolCallId: 'call_2', toolName: 'add', output: { type: 'text', value: '3' } },
    ]);
    expect(last).toMatchObject({ done: true, text: 'a.txt holds its contents; 1 + 2 = 3.', toolMessage: undefined });
    expect(last.messages.map((m) => m.role)).toEqual(['assistant']);
    // The model's second prompt held the calls and their results, as the SDK converts them for a provider.
    const second = prompts[1] as { role: string; content: { type: string; toolCallId?: string }[] }[];
    expect(second.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(second[2]?.content.map((part) => part.toolCallId)).toEqual(['call_1', 'call_2']);
  });

  it('a call the SDK finds invalid: the SDK\'s own error result is dropped, the pipeline\'s answer is the one', async () => {
    const { tools } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    const { model } = conversation([
      [{ type: 'stream-start', warnings: [] }, { type: 'tool-call', toolCallId: 'call_x', toolName: 'no_such_tool', input: '{}' }, finish('tool-calls')],
    ]);
    const turn = await runAISDKTurn(pipeline, streamText({ model, tools: toAISDKTools(pipeline), prompt: 'Go.', onError: () => undefined }));
    expect(turn.results.map((r) => r.error?.code)).toEqual(['unknown_tool']);
    expect(turn.messages.filter((m) => m.role === 'tool')).toEqual([turn.toolMessage]);
    expect(turn.toolMessage?.content).toEqual([expect.objectContaining({ toolCallId: 'call_x', output: expect.objectContaining({ type: 'error-text' }) })]);
  });

  it('toAISDKTools: the pipeline\'s available tools with their JSON Schemas, no execute, every name an own property', () => {
    const proto = defineTool({ name: '__proto__', description: 'odd name', input: z.object({}), execute: () => 'x' });
    const { tools } = recordingTools();
    const set = toAISDKTools([...tools, proto]);
    expect(Object.keys(set)).toEqual(['read_file', 'add', '__proto__']);
    for (const schema of toolSchemas([...tools, proto])) {
      const tool = set[schema.name]!;
      expect(tool.description).toBe(schema.description);
      expect('execute' in tool).toBe(false);
      expect((tool.inputSchema as { jsonSchema: unknown }).jsonSchema).toEqual(schema.inputSchema);
    }
    expect(Object.getPrototypeOf(set)).toBe(Object.prototype);
  });

  it('toAISDKToolOutputChunks: output-available with the content for ok, output-error with the text for any other; cut-off calls left out', async () => {
    const { tools } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools], pre: [denyTools(['add'], 'not now')] });
    const results = await pipeline.run([
      { id: 'c1', name: 'read_file', args: { path: 'a.txt' } },
      { id: 'c2', name: 'add', args: { a: 1, b: 2 } },
      { id: 'c3', name: 'read_file', args: { path: 7 } },
      { id: 'c4', name: 'read_file', args: new IncompleteArguments('max_tokens', '{"pa') },
    ]);
    const content = (id: string) => results.find((r) => r.id === id)!.content;
    expect(toAISDKToolOutputChunks(results)).toEqual([
      { type: 'tool-output-available', toolCallId: 'c1', output: 'contents of a.txt' },
      { type: 'tool-output-error', toolCallId: 'c2', errorText: content('c2') },
      { type: 'tool-output-error', toolCallId: 'c3', errorText: content('c3') },
    ]);
    expect(content('c2')).toContain('not now');
  });
});
