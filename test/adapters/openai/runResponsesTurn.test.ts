import OpenAI from 'openai';
import type { ResponseOutputMessage, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openAICustomTools, runOpenAIResponsesTurn, toOpenAIResponsesTools } from '../../../src/adapters/openai/index.js';
import { ConfigError, createPipeline, defineTool } from '../../../src/index.js';
import { streamedResponse } from '../../../src/testing/index.js';
import { functionCall, recordingTools, response, sequence, toSSE } from './helpers.js';

const text = (id: string, words: string): ResponseOutputMessage => ({
  type: 'message',
  id,
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: words, annotations: [] }],
});

const reading = functionCall('fc_1', 'call_1', 'read_file', '{"path":"a.md"}');
const note = text('msg_1', 'Reading a.md.');
/** A response with a message and one call, as the API streams it. */
const withCall: ResponseStreamEvent[] = sequence([
  { type: 'response.created', response: response('in_progress') },
  { type: 'response.output_item.added', output_index: 0, item: { ...note, status: 'in_progress', content: [] } },
  { type: 'response.output_item.done', output_index: 0, item: note },
  { type: 'response.output_item.added', output_index: 1, item: { ...reading, arguments: '', status: 'in_progress' } },
  { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta: '{"path":"a.md"}' },
  { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 1, name: 'read_file', arguments: reading.arguments },
  { type: 'response.output_item.done', output_index: 1, item: reading },
  { type: 'response.completed', response: response('completed', [note, reading]) },
]);

describe('runOpenAIResponsesTurn', () => {
  it('through the real client: the output items come back as input, then one function_call_output per call', async () => {
    const { pipeline, ran } = recordingTools();
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://openai.test/v1', fetch: async () => streamedResponse(toSSE(withCall)), maxRetries: 0 });
    const stream = await client.responses.create({ model: 'gpt-4.1', input: 'Read a.md', tools: toOpenAIResponsesTools(pipeline), stream: true });

    const turn = await runOpenAIResponsesTurn(pipeline, stream);

    expect(ran).toEqual(['a.md']);
    expect(turn.output).toEqual([note, reading]);
    expect(turn.toolOutputs).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: 'contents of a.md' }]);
    expect(turn.items).toEqual([note, reading, ...turn.toolOutputs]);
    expect(turn).toMatchObject({ text: 'Reading a.md.', responseId: 'resp_68a1f0c2d4e08190b7c1a2b3c4d5e6f7', done: false });
  });

  it('the last turn: a message, no calls, done', async () => {
    const { pipeline } = recordingTools();
    const done = text('msg_2', 'All done.');
    const events = sequence([
      { type: 'response.created', response: response('in_progress') },
      { type: 'response.output_item.done', output_index: 0, item: done },
      { type: 'response.completed', response: response('completed', [done]) },
    ]);
    const turn = await runOpenAIResponsesTurn(pipeline, from(events));
    expect(turn).toMatchObject({ items: [done], toolOutputs: [], text: 'All done.', done: true });
  });

  it('a stream cut off before the call\'s item came: the call goes back as far as the model got, answered incomplete_args', async () => {
    const { pipeline, ran } = recordingTools();
    const events = sequence([
      { type: 'response.created', response: response('in_progress') },
      { type: 'response.output_item.added', output_index: 0, item: { ...reading, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: '{"pa' },
    ]);
    const turn = await runOpenAIResponsesTurn(pipeline, from(events));
    expect(turn.output).toEqual([{ type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"pa' }]);
    expect(turn.toolOutputs).toEqual([expect.objectContaining({ type: 'function_call_output', call_id: 'call_1' })]);
    expect(turn.results[0]?.error?.code).toBe('incomplete_args');
    expect(ran).toEqual([]);
  });

  it('a terminal event without output: the items finished on the way, in output order', async () => {
    const { pipeline } = recordingTools();
    const events = sequence([
      { type: 'response.created', response: response('in_progress') },
      { type: 'response.output_item.done', output_index: 1, item: reading },
      { type: 'response.output_item.done', output_index: 0, item: note },
      { type: 'response.completed', response: response('completed', []) },
    ]);
    const turn = await runOpenAIResponsesTurn(pipeline, from(events));
    expect(turn.output).toEqual([note, reading]);
    expect(turn.toolOutputs.map((item) => (item as { call_id: string }).call_id)).toEqual(['call_1']);
  });

  it('free-form tools: the custom_tool_call item goes back, answered with custom_tool_call_output', async () => {
    const applyPatch = defineTool({ name: 'apply_patch', description: 'Apply a patch', input: z.string(), execute: (patch) => `applied ${patch.length} characters` });
    const pipeline = createPipeline({ tools: [applyPatch] });
    const custom = openAICustomTools([applyPatch]);
    const call = { type: 'custom_tool_call' as const, id: 'ctc_1', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch' };
    const events = sequence([
      { type: 'response.created', response: response('in_progress') },
      { type: 'response.output_item.added', output_index: 0, item: { ...call, input: '' } },
      { type: 'response.custom_tool_call_input.done', item_id: 'ctc_1', output_index: 0, input: call.input },
      { type: 'response.output_item.done', output_index: 0, item: call },
      { type: 'response.completed', response: response('completed', [call]) },
    ]);
    const turn = await runOpenAIResponsesTurn(pipeline, from(events), { custom });
    expect(turn.items).toEqual([call, { type: 'custom_tool_call_output', call_id: 'call_p', output: 'applied 15 characters' }]);
    expect(() => runOpenAIResponsesTurn(pipeline, from(events), { custom: ['apply_patch'] as never })).toThrow(ConfigError);
  });
});
