// A useChat backend that shows a long tool's progress live: the pipeline's events become the AI SDK's
// UI message stream (preliminary tool outputs for progress, then the final output), served over HTTP.
//
//   npx tsx examples/ai-sdk-progress.ts      serves on a loopback port and prints its URL
//
// A page with `useChat({ transport: new DefaultChatTransport({ api: url }) })` renders each tool part;
// while `part.preliminary` is true, `part.output` is the latest progress value.
import { createServer, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createUIMessageStream, pipeUIMessageStreamToResponse } from 'ai';
import { lastValueFrom, tap } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from '../src/index.js';
import { toAISDKEventChunks } from '../src/adapters/ai-sdk/index.js';

const build = defineTool({
  name: 'build',
  description: 'Compile the given files',
  input: z.object({ files: z.array(z.string()) }),
  mode: 'parallel',
  execute: async ({ files }, ctx) => {
    for (const [done, file] of files.entries()) {
      ctx.progress({ done, total: files.length, file });
      await new Promise((resolve) => setTimeout(resolve, 20)); // compiling…
    }
    return `built ${files.length} files`;
  },
});

const pipeline = createPipeline({ tools: [build] });

/** The calls one response asks for (a model would stream them; here they are fixed). */
const calls: ToolCall[] = [{ id: 'build_1', name: 'build', args: { files: ['a.ts', 'b.ts', 'c.ts'] } }];

/** Starts the server on a loopback port; resolves to it and its URL. */
export async function serve(port = 0): Promise<{ server: Server; url: string }> {
  const server = createServer((_request, response) => {
    const stream = createUIMessageStream({
      execute: async ({ writer }) => {
        writer.write({ type: 'start' });
        writer.write({ type: 'start-step' });
        for (const call of calls) writer.write({ type: 'tool-input-available', toolCallId: call.id, toolName: call.name, input: call.args });
        await lastValueFrom(pipeline.events(calls).pipe(toAISDKEventChunks(), tap((chunk) => writer.write(chunk))), { defaultValue: undefined });
        writer.write({ type: 'finish-step' });
        writer.write({ type: 'finish' });
      },
    });
    pipeUIMessageStreamToResponse({ response, stream });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : port}/`;
  return { server, url };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { url } = await serve();
  console.log(`serving a UI message stream with live tool progress at ${url} (Ctrl-C to stop)`);
}
