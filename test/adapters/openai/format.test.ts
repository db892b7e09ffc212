import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import type { ResponseCreateParamsStreaming, ResponseInputItem, Tool } from 'openai/resources/responses/responses';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  toOpenAIChatToolMessages,
  toOpenAIChatTools,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
} from '../../../src/adapters/openai/index.js';
import { createPipeline, defineTool, RestrictionSet, type ToolResult } from '../../../src/index.js';

const read = defineTool({
  name: 'read_file',
  description: 'Read a UTF-8 file',
  input: z.object({ path: z.string(), maxLines: z.number().int().optional() }),
  mode: 'parallel',
  execute: ({ path }) => `contents of ${path}`,
});
const remove = defineTool({
  name: 'delete_file',
  description: 'Delete a file',
  input: z.object({ path: z.string() }),
  execute: () => 'deleted',
});
const pipeline = createPipeline({ tools: [read, remove] });

const READ_PARAMETERS = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    maxLines: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
  },
  required: ['path'],
};

async function someResults(): Promise<ToolResult[]> {
  return pipeline.run([
    { id: 'call_1', name: 'read_file', args: '{"path":"README.md"}' },
    { id: 'call_2', name: 'read_file', args: '{"path": 42}' },
    { id: 'call_3', name: 'nope', args: '{}' },
  ]);
}

describe('results back to OpenAI', () => {
  it('Chat: one tool message per result, in order, errors included', async () => {
    const results = await someResults();
    const toolMessages = toOpenAIChatToolMessages(results);
    expect(toolMessages).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'contents of README.md' },
      { role: 'tool', tool_call_id: 'call_2', content: results[1]!.content },
      { role: 'tool', tool_call_id: 'call_3', content: results[2]!.content },
    ]);
    expect(results[1]!.content).toMatch(/path/);
    expect(results[2]!.content).toMatch(/Unknown tool "nope"/);

    // Compile-time: they go straight into a request's messages.
    const messages: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Read the README' },
      {
        role: 'assistant',
        content: null,
        tool_calls: results.map((r) => ({ id: r.id, type: 'function', function: { name: r.name, arguments: '{}' } })),
      },
      ...toOpenAIChatToolMessages(results),
    ];
    expect(messages).toHaveLength(5);
    expectTypeOf(toOpenAIChatToolMessages).returns.toEqualTypeOf<ChatCompletionToolMessageParam[]>();
  });

  it('Responses: one function_call_output item per result, in order', async () => {
    const results = await someResults();
    const input: ResponseInputItem[] = toOpenAIResponsesInput(results);
    expect(input).toEqual([
      { type: 'function_call_output', call_id: 'call_1', output: 'contents of README.md' },
      { type: 'function_call_output', call_id: 'call_2', output: results[1]!.content },
      { type: 'function_call_output', call_id: 'call_3', output: results[2]!.content },
    ]);
    expectTypeOf(toOpenAIResponsesInput).returns.toExtend<ResponseInputItem[]>();
  });

  it('an empty batch gives empty lists', () => {
    expect(toOpenAIChatToolMessages([])).toEqual([]);
    expect(toOpenAIResponsesInput([])).toEqual([]);
  });
});

describe('tools offered to OpenAI', () => {
  it('Chat: { type: function, function: { name, description, parameters } }', () => {
    const tools = toOpenAIChatTools(pipeline);
    expect(tools).toEqual([
      { type: 'function', function: { name: 'read_file', description: 'Read a UTF-8 file', parameters: READ_PARAMETERS } },
      {
        type: 'function',
        function: {
          name: 'delete_file',
          description: 'Delete a file',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      },
    ]);
    // Compile-time: the list is a request's `tools` as is.
    const params: ChatCompletionCreateParamsStreaming = {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      tools: toOpenAIChatTools(pipeline),
      stream: true,
    };
    const union: ChatCompletionTool[] = toOpenAIChatTools([read]);
    expect(params.tools).toHaveLength(2);
    expect(union).toHaveLength(1);
  });

  it('Responses: { type: function, name, description, parameters, strict: false }', () => {
    const tools = toOpenAIResponsesTools([read]);
    expect(tools).toEqual([
      { type: 'function', name: 'read_file', description: 'Read a UTF-8 file', parameters: READ_PARAMETERS, strict: false },
    ]);
    const params: ResponseCreateParamsStreaming = {
      model: 'gpt-4.1',
      input: [{ role: 'user', content: 'hi' }, ...toOpenAIResponsesInput([])],
      tools: toOpenAIResponsesTools(pipeline),
      stream: true,
    };
    const union: Tool[] = tools;
    expect(params.tools).toHaveLength(2);
    expect(union).toHaveLength(1);
  });

  it('a pipeline’s restrictions apply: hidden tools are not offered', () => {
    const restricted = createPipeline({
      tools: [read, remove],
      restrictions: new RestrictionSet([{ scope: 'host', deny: ['delete_*'] }]),
    });
    expect(toOpenAIChatTools(restricted).map((t) => t.function.name)).toEqual(['read_file']);
    expect(toOpenAIResponsesTools(restricted).map((t) => t.name)).toEqual(['read_file']);
    // A plain list is taken as given.
    expect(toOpenAIResponsesTools([read, remove]).map((t) => t.name)).toEqual(['read_file', 'delete_file']);
  });
});
