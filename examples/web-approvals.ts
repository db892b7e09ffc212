// A web server whose approvals outlive it: a model's response runs through the pipeline in one request,
// the write it asks for waits for a human, and the answer comes in a later request — to this process,
// or to another one started after it stopped, sharing the same SQLite journal.
//
//   JOURNAL=./turns.db WORKSPACE=./ws APPROVAL_SECRET=$(openssl rand -hex 32) PORT=8080 npx tsx examples/web-approvals.ts
//
// POST /turns/:turn          replays a recorded model response (examples/transcripts/anthropic-workspace.sse.txt)
//                            through the pipeline: the reads run, the write is suspended
//                            → 200 { results: [{ id, name, status }], pending: [{ callId, tool, args, reasons, token, expiresAt }] }
// POST /turns/:turn/answers  { answers: [{ token, answer: 'allowed-once' | 'rejected' }] }: the turn resumes
//                            → 200 { message }, the tool_result message for the model's next request
// A bad token, a turn another process is driving, or an unknown turn → 4xx { error: code, message }.
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createPipeline, DurableTurnError, suspendApprovals, type ApprovalResponse, type ToolResult } from '../src/index.js';
import { fromAnthropicStream, toAnthropicToolResults } from '../src/adapters/anthropic/index.js';
import { sqliteJournal } from '../src/durable/sqlite/index.js';
import { openWorkspace } from './workspace.js';

const env = (name: string) => process.env[name] ?? (() => { throw new Error(`${name} is required (see the top of examples/web-approvals.ts)`); })();
const journal = sqliteJournal({ path: env('JOURNAL') });
const workspace = await openWorkspace({ dir: env('WORKSPACE'), log: (line) => console.log(line) });
const pipeline = createPipeline({
  tools: workspace.tools,
  pre: workspace.pre, // the sandbox, and "writes need approval"
  approve: suspendApprovals(), // …given by a human, in a later request
  journal,
  approvalSecret: env('APPROVAL_SECRET'),
  // The server's log: every body that starts, in any request (an event observer sees every run's events).
  observers: [{ event: (e) => void (e.type === 'started' && console.log(`  ▶ #${e.index} ${e.name} running`)) }],
});

/** The model's response, replayed from its recording through the SDK's own parser. */
async function* modelResponse(): AsyncIterable<RawMessageStreamEvent> {
  const sse = await readFile(new URL('transcripts/anthropic-workspace.sse.txt', import.meta.url), 'utf8');
  yield* Stream.fromSSEResponse<RawMessageStreamEvent>(new Response(sse), new AbortController());
}

const outline = (results: readonly ToolResult[]) => results.map(({ id, name, status }) => ({ id, name, status }));

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const match = /^\/turns\/([\w.-]+)(\/answers)?$/.exec(request.url ?? '');
  if (request.method !== 'POST' || match === null) return send(response, 404, { error: 'not_found' });
  const turn = match[1]!;
  try {
    if (match[2] === undefined) {
      const results = await pipeline.run(fromAnthropicStream(modelResponse()), { turn });
      return send(response, 200, { results: outline(results), pending: await pipeline.pendingApprovals(turn) });
    }
    const { answers } = JSON.parse(await body(request)) as { answers: ApprovalResponse[] };
    const results = await pipeline.resume(turn, { answers });
    const pending = await pipeline.pendingApprovals(turn);
    if (pending.length > 0) return send(response, 202, { results: outline(results), pending }); // more to answer
    return send(response, 200, { message: toAnthropicToolResults(results) });
  } catch (error) {
    if (error instanceof DurableTurnError) return send(response, error.code === 'turn_leased' ? 409 : 400, { error: error.code, message: error.message });
    throw error;
  }
}

function body(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks).toString('utf8'))).on('error', reject);
  });
}

function send(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

const server = createServer((request, response) => {
  handle(request, response).catch((error: unknown) => send(response, 500, { error: 'internal', message: String(error) }));
});
server.listen(Number(process.env['PORT'] ?? 8080), '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : ''}`);
});
process.once('SIGTERM', () => server.close(() => journal.close()));
