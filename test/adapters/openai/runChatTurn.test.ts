import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { Stream } from 'openai/streaming';
import { from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { runOpenAIChatTurn } from '../../../src/adapters/openai/index.js';
import { SourceError } from '../../../src/index.js';
import { streamedResponse } from '../../../src/testing/index.js';
import { calls, chunk, finish, first, more, recordingTools } from './helpers.js';

describe('runOpenAIChatTurn', () => {
  it('the last turn: the text, no tool_calls field (OpenAI rejects an empty list), done', async () => {
    const { pipeline } = recordingTools();
    const turn = await runOpenAIChatTurn(pipeline, from([chunk({ role: 'assistant', content: 'All ' }), chunk({ content: 'done.' }), finish('stop')]));
    expect(turn.messages).toEqual([{ role: 'assistant', content: 'All done.' }]);
    expect(turn).toMatchObject({ done: true, text: 'All done.', finishReason: 'stop', toolMessages: [] });
  });

  it('one index, a new id per call (Ollama): two calls in the message, each answered; the SDK accumulator would merge them', async () => {
    const { pipeline, ran } = recordingTools();
    const chunks: ChatCompletionChunk[] = [
      chunk({ role: 'assistant' }),
      calls([first(0, 'call_a', 'read_file', '{"path":"a.md"}')]),
      calls([first(0, 'call_b', 'read_file', '{"path":"b.md"}')]),
      finish('tool_calls'),
    ];
    const turn = await runOpenAIChatTurn(pipeline, from(chunks));
    expect(ran).toEqual(['a.md', 'b.md']);
    expect(turn.message.tool_calls?.map((c) => c.id)).toEqual(['call_a', 'call_b']);
    expect(turn.toolMessages.map((m) => m.tool_call_id)).toEqual(['call_a', 'call_b']);

    const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n';
    const sdk = ChatCompletionStream.fromReadableStream(Stream.fromSSEResponse(streamedResponse(sse), new AbortController()).toReadableStream());
    expect((await sdk.finalMessage()).tool_calls).toHaveLength(1);
  });

  it('a call cut off by length: in the message as far as it came, answered incomplete_args, not done', async () => {
    const { pipeline, ran } = recordingTools();
    const turn = await runOpenAIChatTurn(pipeline, from([calls([first(0, 'call_cut', 'read_file', '{"pa')]), calls([more(0, 'th":')]), finish('length')]));
    expect(turn.message.tool_calls).toEqual([{ id: 'call_cut', type: 'function', function: { name: 'read_file', arguments: '{"path":' } }]);
    expect(turn.results.map((r) => r.error?.code)).toEqual(['incomplete_args']);
    expect(turn.toolMessages.map((m) => m.tool_call_id)).toEqual(['call_cut']);
    expect(turn.done).toBe(false);
    expect(ran).toEqual([]);
  });

  it('a refusal is kept; an empty response adds no message', async () => {
    const { pipeline } = recordingTools();
    const refused = await runOpenAIChatTurn(pipeline, from([chunk({ refusal: 'I cannot help with that.' }), finish('stop')]));
    expect(refused.messages).toEqual([{ role: 'assistant', content: '', refusal: 'I cannot help with that.' }]);
    const empty = await runOpenAIChatTurn(pipeline, from([chunk({ role: 'assistant' }), finish('stop')]));
    expect(empty.messages).toEqual([]);
    expect(empty.done).toBe(true);
  });

  it('a stream that fails midway rejects with a SourceError holding every result', async () => {
    const { pipeline } = recordingTools();
    async function* failing() {
      yield calls([first(0, 'call_a', 'read_file', '{"path":"a.md"}')]);
      yield calls([first(1, 'call_b', 'read_file', '{"path":"b.md"}')]);
      throw new Error('connection reset');
    }
    const error: unknown = await runOpenAIChatTurn(pipeline, failing()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect((error as SourceError).results.map((r) => [r.id, r.status === 'ok' ? 'ok' : r.error.code])).toEqual([['call_a', 'ok'], ['call_b', 'incomplete_args']]);
  });
});
