import { readFileSync } from 'node:fs';
import { createOpenAI } from '@ai-sdk/openai';
import { convertToModelMessages, isToolUIPart, parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { respond, workspace } from '../../examples/agents/ai-sdk-ui.js';
import { startReplayServer } from '../support/replayServer.js';

// examples/agents/ai-sdk-ui.ts, the loop behind useChat, with the AI SDK's OpenAI provider pointed at the
// replay server (the recorded Chat conversation of agentLoops.test.ts), read as useChat reads it: the
// SSE body parsed with the SDK's chunk schema and folded into a UIMessage by readUIMessageStream.

const transcript = (n: number) => readFileSync(new URL(`transcripts/openai-chat-${n}.sse.txt`, import.meta.url), 'utf8');

afterAll(() => workspace.close());

describe('the useChat loop (examples/agents/ai-sdk-ui.ts)', () => {
  it('streams every step, and each tool part ends with its output (or the reason it has none)', async () => {
    const server = await startReplayServer([1, 2, 3].map((n) => ({ path: '/v1/chat/completions', sse: transcript(n) })));
    try {
      const model = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key' }).chat('gpt-4.1');
      const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Summarise the TODOs of the workspace in notes/summary.md' }] };
      const response = respond([user], model);

      // As useChat's transport reads it.
      const chunks = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).pipeThrough(
        new TransformStream<{ success: boolean; value?: UIMessageChunk }, UIMessageChunk>({
          transform(parsed, controller) {
            if (!parsed.success) throw new Error('a chunk the SDK cannot parse');
            controller.enqueue(parsed.value!);
          },
        }),
      );
      let assistant: UIMessage | undefined;
      for await (const message of readUIMessageStream({ stream: chunks, terminateOnError: true })) assistant = message;

      expect(server.requests).toHaveLength(3);
      const tools = assistant!.parts.filter(isToolUIPart);
      expect(tools.map((part) => [part.type, part.state])).toEqual([
        ['tool-list_dir', 'output-available'],
        ['tool-read_file', 'output-available'],
        ['tool-search', 'output-available'],
        ['tool-read_file', 'output-error'],
        ['tool-write_file', 'output-available'],
      ]);
      expect(tools[1]).toMatchObject({ input: { path: 'notes/todo.md' }, output: '- TODO: write tests\n- TODO: ship it\n- TODO: tell people\n' });
      expect(tools[3]).toMatchObject({ input: { path: '../../etc/passwd' }, errorText: expect.stringMatching(/^Denied by policy "pathSandbox/) });
      const texts = assistant!.parts.flatMap((part) => (part.type === 'text' ? [part.text] : []));
      expect(texts.at(-1)).toContain('Done: notes/summary.md lists the 4 TODOs.');

      // The next request from the page carries every call with its result: the model reads them.
      const next = await convertToModelMessages([user, assistant!]);
      const answered = next.flatMap((m) => (m.role === 'tool' ? m.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])) : []));
      expect(answered).toEqual(tools.map((part) => part.toolCallId));
    } finally {
      await server.close();
    }
  });
});
