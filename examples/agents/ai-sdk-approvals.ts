// The route behind a `useChat` page whose approvals outlive the server: the agent loop runs in the chat's
// POST, a write the model asks for waits for a human — shown by useChat's own approval UI (the tool part's
// `approval-requested` state, answered with `addToolApprovalResponse`) — and the answer comes back in the
// next POST, to this process or to another one started after it stopped, sharing the SQLite journal.
//
//   JOURNAL=./turns.db WORKSPACE=./ws APPROVAL_SECRET=$(openssl rand -hex 32) PORT=8080 npx tsx examples/agents/ai-sdk-approvals.ts
//
// POST /api/chat  { id, messages }, as useChat's DefaultChatTransport sends it → a UI message stream.
// The page needs nothing of toolstream (examples/agents/ai-sdk-page.ts): useChat's `sendAutomaticallyWhen`
// sends the answers once every approval of the step has one. The provider package's variables reach the
// API or any compatible server (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { openai } from '@ai-sdk/openai';
import { convertToModelMessages, createUIMessageStream, createUIMessageStreamResponse, streamText, type UIMessage } from 'ai';
import { createPipeline, suspendApprovals } from 'toolstream';
import { ContinuationError, continuationOf, runAISDKLoop, stepCountIs, toAISDKTools } from 'toolstream/ai-sdk';
import { sqliteJournal } from 'toolstream/sqlite';
import { openWorkspace } from '../workspace.js';
import { instructions } from './console.js';

const env = (name: string) => process.env[name] ?? (() => { throw new Error(`${name} is required (see the top of examples/agents/ai-sdk-approvals.ts)`); })();
// #region pipeline
const journal = sqliteJournal({ path: env('JOURNAL') });
const workspace = await openWorkspace({ dir: env('WORKSPACE') });
const pipeline = createPipeline({
  tools: workspace.tools,
  pre: workspace.pre, // the sandbox, and "writes need approval"
  approve: suspendApprovals(), // …given by a human, in a later request
  journal,
  approvalSecret: env('APPROVAL_SECRET'),
  observers: [{ event: (e) => void (e.type === 'started' && console.log(`  ▶ ${e.name} ${e.id} running`)) }],
});
const tools = toAISDKTools(pipeline);
const model = openai.chat(process.env['OPENAI_MODEL'] ?? 'gpt-4.1');
// #endregion pipeline

// #region respond
/** The chat's POST: the agent loop as one UI message stream; a suspended loop goes on in the next POST. */
export function respond({ id, messages }: { id: string; messages: UIMessage[] }): Response {
  const question = messages.findLast((message) => message.role === 'user')!;
  const stream = createUIMessageStream({
    originalMessages: messages,
    execute: async ({ writer }) => {
      await runAISDKLoop(pipeline, {
        messages: await convertToModelMessages(messages), // with the page's approval responses, if any
        continuation: continuationOf(messages), // the metadata the loop left on a suspended answer
        request: (history) => streamText({ model, system: instructions, tools, messages: history }),
        turn: `${id}/${question.id}`, // step n runs as the durable turn `${id}/${question.id}/${n}`
        stopWhen: stepCountIs(10),
        writer, // the steps, the tools' outputs, approval requests, and the continuation
      });
    },
    // Submitted twice, or an approval id altered: nothing ran, nothing went to the model.
    onError: (error) => (error instanceof ContinuationError ? error.code : 'internal error'),
  });
  return createUIMessageStreamResponse({ stream });
}
// #endregion respond

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method !== 'POST' || request.url !== '/api/chat') return void response.writeHead(404).end();
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const answer = respond(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; messages: UIMessage[] });
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => (headers[name] = value));
  response.writeHead(answer.status, headers);
  Readable.fromWeb(answer.body! as WebReadableStream).pipe(response);
}

const server = createServer((request, response) => {
  handle(request, response).catch((error: unknown) => response.writeHead(500).end(String(error)));
});
server.listen(Number(process.env['PORT'] ?? 8080), '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : ''}`);
});
process.once('SIGTERM', () => server.close(() => journal.close()));
