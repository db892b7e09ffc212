import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { firstValueFrom, from, toArray, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AISDKStreamPart } from '../../src/adapters/ai-sdk/index.js';
import { fromAISDKStream } from '../../src/adapters/ai-sdk/index.js';
import { fromAnthropicStream, type AnthropicStreamEvent } from '../../src/adapters/anthropic/index.js';
import { fromOpenAIChatStream, fromOpenAIResponsesStream } from '../../src/adapters/openai/index.js';
import { createPipeline, defineTool, type ToolCall } from '../../src/index.js';
import { ev, toolUse } from './anthropic/helpers.js';
import { calls as chatCalls, chunk, finish, first, functionCall, response, sequence } from './openai/helpers.js';

const collect = (calls$: Observable<ToolCall>) => firstValueFrom(calls$.pipe(toArray()));
const turns = (calls: readonly ToolCall[]) => calls.map((call) => [call.id, call.turn]);

/** An Anthropic message with its own id, holding the given blocks. */
const anthropicMessage = (id: string, blocks: readonly AnthropicStreamEvent[]): AnthropicStreamEvent[] => {
  const start = ev.messageStart() as AnthropicStreamEvent & { message: object };
  return [{ ...start, message: { ...start.message, id } } as AnthropicStreamEvent, ...blocks, ev.messageDelta('tool_use'), ev.messageStop()];
};

describe('each adapter sets the turn of its calls: the model response they came in', () => {
  it('Anthropic: the message id, per message of the source', async () => {
    const events = [
      ...anthropicMessage('msg_1', [...toolUse(0, 'toolu_a', 'read', ['{}']), ...toolUse(1, 'toolu_b', 'read', ['{}'])]),
      ...anthropicMessage('msg_2', toolUse(0, 'toolu_c', 'read', ['{}'])),
    ];
    expect(turns(await collect(fromAnthropicStream(from(events))))).toEqual([['toolu_a', 'msg_1'], ['toolu_b', 'msg_1'], ['toolu_c', 'msg_2']]);
  });

  it('OpenAI Chat: the completion id; a chunk without one (Azure\'s filter results) does not change it', async () => {
    const filter = { ...chunk({}), id: '', choices: [] };
    const source = [
      { ...filter },
      { ...chatCalls([first(0, 'call_a', 'read', '{}')]), id: 'chatcmpl-1' },
      { ...chatCalls([first(1, 'call_b', 'read', '{}')]), id: 'chatcmpl-1' },
      { ...finish('tool_calls'), id: 'chatcmpl-1' },
    ];
    expect(turns(await collect(fromOpenAIChatStream(from(source))))).toEqual([['call_a', 'chatcmpl-1'], ['call_b', 'chatcmpl-1']]);
  });

  it('OpenAI Responses: the response id', async () => {
    const call = functionCall('fc_1', 'call_a', 'read', '{}');
    const events = sequence([
      { type: 'response.created', response: { ...response('in_progress'), id: 'resp_1' } },
      { type: 'response.output_item.added', output_index: 0, item: { ...call, arguments: '', status: 'in_progress' } },
      { type: 'response.output_item.done', output_index: 0, item: call },
      { type: 'response.completed', response: { ...response('completed', [call]), id: 'resp_1' } },
    ]) as ResponseStreamEvent[];
    expect(turns(await collect(fromOpenAIResponsesStream(from(events))))).toEqual([['call_a', 'resp_1']]);
  });

  it('AI SDK: one turn per step, shared by the calls of a step, distinct across steps and streams', async () => {
    const step = (ids: string[]): AISDKStreamPart[] => [
      { type: 'start-step' } as AISDKStreamPart,
      ...ids.map((id) => ({ type: 'tool-call', toolCallId: id, toolName: 'read', input: {} }) as unknown as AISDKStreamPart),
      { type: 'finish-step', finishReason: 'tool-calls' } as AISDKStreamPart,
    ];
    const one = await collect(fromAISDKStream(from([...step(['a', 'b']), ...step(['c'])])));
    const other = await collect(fromAISDKStream(from(step(['d']))));
    const [a, b, c] = one.map((call) => call.turn);
    expect(a).toMatch(/^step_/);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(other[0]!.turn).not.toBe(a);
    expect(other[0]!.turn).not.toBe(c);
  });

  it('end to end: one subscription over two Anthropic messages, a failing write in the first cancels nothing of the second', async () => {
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => { throw new Error('EACCES'); } });
    const read = defineTool({ name: 'read', description: 'r', input: z.object({}), mode: 'parallel', execute: async () => 'read' });
    const events = [
      ...anthropicMessage('msg_1', [...toolUse(0, 'toolu_w', 'write', ['{}']), ...toolUse(1, 'toolu_r1', 'read', ['{}'])]),
      ...anthropicMessage('msg_2', toolUse(0, 'toolu_r2', 'read', ['{}'])),
    ];
    const results = await createPipeline({ tools: [write, read] }).run(fromAnthropicStream(from(events)));
    expect(results.map((r) => [r.id, r.turn, r.status])).toEqual([
      ['toolu_w', 'msg_1', 'error'],
      ['toolu_r1', 'msg_1', 'cancelled'],
      ['toolu_r2', 'msg_2', 'ok'],
    ]);
  });
});
