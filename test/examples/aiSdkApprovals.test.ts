import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbstractChat,
  DefaultChatTransport,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type ChatState,
  type ChatStatus,
  type UIMessage,
} from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { startReplayServer, type ReplayServer } from '../support/replayServer.js';
import { startExample, stopExample } from './exampleServer.js';

// examples/agents/ai-sdk-approvals.ts in two processes, driven by the AI SDK's own chat client (what
// useChat wraps: the same transport, addToolApprovalResponse, sendAutomaticallyWhen), with the official
// OpenAI provider of the AI SDK pointed at a loopback server that replays the recorded conversation of
// agentLoops.test.ts. Process A runs until the write is suspended; process B, started after A stopped,
// takes the answer from the page's messages, resumes the turn and goes on.

const dir = mkdtempSync(join(tmpdir(), 'ai-sdk-approvals-'));
const transcript = (n: number) => readFileSync(new URL(`transcripts/openai-chat-${n}.sse.txt`, import.meta.url), 'utf8');
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const start = (model: ReplayServer, env: Record<string, string>) =>
  startExample('examples/agents/ai-sdk-approvals.ts', { ...process.env, ...env, OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'test-key', PORT: '0' }, children);
const stop = stopExample;
const ran = (output: readonly string[]) => [...output.join('').matchAll(/▶ (\w+) (\w+) running/g)].map((m) => `${m[1]} ${m[2]}`);

/** useChat without React: the SDK's AbstractChat over plain state. */
class Chat extends AbstractChat<UIMessage> {
  constructor(init: ConstructorParameters<typeof AbstractChat<UIMessage>>[0] extends infer I ? Omit<I, 'state'> : never) {
    let messages: UIMessage[] = [];
    let status: ChatStatus = 'ready';
    let error: Error | undefined;
    const state: ChatState<UIMessage> = {
      get status() { return status; },
      set status(value) { status = value; },
      get error() { return error; },
      set error(value) { error = value; },
      get messages() { return messages; },
      set messages(value) { messages = value; },
      pushMessage: (message) => void (messages = [...messages, message]),
      popMessage: () => void (messages = messages.slice(0, -1)),
      replaceMessage: (index, message) => void (messages = messages.map((m, i) => (i === index ? message : m))),
      snapshot: (thing) => structuredClone(thing),
    };
    super({ ...init, state });
  }
}

/** Waits until the chat is idle again (a request, and any request it sends automatically, done). */
async function settled(chat: Chat): Promise<void> {
  for (let i = 0; i < 6000 && (chat.status === 'submitted' || chat.status === 'streaming'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** POSTs a useChat body and reads the UI message stream's text (SSE). */
async function post(url: string, body: unknown): Promise<string> {
  const response = await fetch(`${url}/api/chat`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return response.text();
}

describe('examples/agents/ai-sdk-approvals.ts: useChat\'s approval UI on a durable loop, across two processes', () => {
  it('A suspends the write as an approval-requested part; B takes the answer from the messages and goes on, every result in model order', async () => {
    const model = await startReplayServer([1, 2, 3].map((n) => ({ path: '/v1/chat/completions', sse: transcript(n) })));
    const env = { JOURNAL: join(dir, 'turns.db'), WORKSPACE: join(dir, 'workspace'), APPROVAL_SECRET: randomBytes(32).toString('hex') };
    try {
      const a = await start(model, env);
      let server = a.url;
      const bodies: { id: string; messages: UIMessage[] }[] = [];
      const chat = new Chat({
        id: 'chat-1',
        transport: new DefaultChatTransport({
          api: '/api/chat',
          fetch: (async (_input: unknown, init?: RequestInit) => {
            bodies.push(JSON.parse(String(init?.body)) as { id: string; messages: UIMessage[] });
            return fetch(`${server}/api/chat`, init);
          }) as typeof fetch,
        }),
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      });

      await chat.sendMessage({ text: 'Summarise the TODOs of the workspace in notes/summary.md' });
      await settled(chat);
      expect(chat.error).toBeUndefined();
      expect(model.requests).toHaveLength(2); // nothing goes to the model after the suspension
      const tools = () => chat.lastMessage!.parts.filter(isToolUIPart);
      expect(tools().map((part) => [part.type, part.state])).toEqual([
        ['tool-list_dir', 'output-available'],
        ['tool-read_file', 'output-available'],
        ['tool-search', 'output-available'],
        ['tool-read_file', 'output-error'],
        ['tool-write_file', 'approval-requested'],
      ]);
      const write = tools()[4]!;
      expect(write.input).toEqual({ path: 'notes/summary.md', content: expect.stringContaining('TODO') });
      expect(ran(a.output)).toEqual(['list_dir call_Loop01AgentTranscript', 'read_file call_Loop02AgentTranscript', 'search call_Loop03AgentTranscript']);
      await stop(a.child);

      const b = await start(model, env); // a new process: nothing of the loop is in its memory
      server = b.url;
      const approvalId = (write as { approval: { id: string } }).approval.id;

      // An approval id the page altered: refused, nothing runs, nothing goes to the model…
      const altered = structuredClone(chat.messages);
      const part = altered.at(-1)!.parts.filter(isToolUIPart).at(-1)! as unknown as Record<string, unknown>;
      Object.assign(part, { state: 'approval-responded', approval: { id: `${approvalId.slice(0, -2)}xx`, approved: true } });
      expect(await post(b.url, { id: 'chat-1', messages: altered, trigger: 'submit-message' })).toMatch(/"errorText":"answer_not_pending"/);
      expect(model.requests).toHaveLength(2);
      expect(ran(b.output)).toEqual([]);

      // …and the page's own answer still goes through: sent automatically once every approval has one.
      await chat.addToolApprovalResponse({ id: approvalId, approved: true });
      await settled(chat);
      expect(chat.error).toBeUndefined();
      expect(ran(b.output)).toEqual(['write_file call_Loop05AgentTranscript']); // only what had not run
      expect(readFileSync(join(env.WORKSPACE, 'notes/summary.md'), 'utf8')).toContain('TODO');
      expect(model.requests).toHaveLength(3);
      const next = model.requests[2]!.body as { messages: { role: string; tool_call_id?: string }[] };
      expect(next.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual([1, 2, 3, 4, 5].map((n) => `call_Loop0${n}AgentTranscript`));
      expect(tools().map((p) => p.state)).toEqual(['output-available', 'output-available', 'output-available', 'output-error', 'output-available']);
      const texts = chat.lastMessage!.parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));
      expect(texts.at(-1)).toContain('Done: notes/summary.md lists the 4 TODOs.');

      // The same answer submitted again: refused; the write does not run twice, the model is not called.
      expect(await post(b.url, bodies.at(-1))).toMatch(/"errorText":"(answer_not_pending|continuation_used)"/);
      expect(ran(b.output)).toEqual(['write_file call_Loop05AgentTranscript']);
      expect(model.requests).toHaveLength(3);
      await stop(b.child);
    } finally {
      await model.close();
    }
  }, 180_000);
});
