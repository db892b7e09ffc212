import { isToolUIPart, parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { serve } from '../../examples/ai-sdk-progress.js';

// examples/ai-sdk-progress.ts over real HTTP, read as useChat reads it: the SSE body parsed with the
// SDK's chunk schema and folded into UIMessages by readUIMessageStream, snapshot by snapshot.
describe('live tool progress in a UI message stream (examples/ai-sdk-progress.ts)', () => {
  it('the tool part shows each progress value as a preliminary output, then the final output', async () => {
    const { server, url } = await serve();
    try {
      const response = await fetch(url, { method: 'POST' });
      expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
      const chunks = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).pipeThrough(
        new TransformStream<{ success: boolean; value?: UIMessageChunk }, UIMessageChunk>({
          transform(parsed, controller) {
            if (!parsed.success) throw new Error('a chunk the SDK cannot parse');
            controller.enqueue(parsed.value!);
          },
        }),
      );
      const seen: [boolean | undefined, unknown][] = [];
      for await (const message of readUIMessageStream({ stream: chunks, terminateOnError: true }) as AsyncIterable<UIMessage>) {
        const part = message.parts.find(isToolUIPart);
        if (part?.state === 'output-available') seen.push([part.preliminary, structuredClone(part.output)]);
      }
      const distinct = seen.filter((s, i) => i === 0 || JSON.stringify(s) !== JSON.stringify(seen[i - 1]));
      expect(distinct).toEqual([
        [true, { done: 0, total: 3, file: 'a.ts' }],
        [true, { done: 1, total: 3, file: 'b.ts' }],
        [true, { done: 2, total: 3, file: 'c.ts' }],
        [undefined, 'built 3 files'],
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
