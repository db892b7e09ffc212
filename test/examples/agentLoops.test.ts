import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startReplayServer, type ReceivedRequest, type ReplayServer } from '../support/replayServer.js';

// The agent loops of examples/agents/, run as a user runs them (`npx tsx examples/agents/x.ts "…"`, in a
// child process), with the official SDK client reaching a local server through the SDK's standard
// variables. The server replays a recorded conversation turn by turn (transcripts/: three responses
// per wire format) and the test checks every request it got: the calls of response N are in request
// N+1's history, each answered exactly once, in order, in the provider's format, with what the tools
// returned; and the loop stopped when the model stopped calling tools (no fourth request).

const root = fileURLToPath(new URL('../..', import.meta.url));
const transcript = (name: string) => readFileSync(new URL(`transcripts/${name}.sse.txt`, import.meta.url), 'utf8');
const PROMPT = 'Summarise the TODOs of the workspace in notes/summary.md';

/** A call in a request's history, or the answer to one: the same for every wire format. */
type Step =
  | { readonly kind: 'call'; readonly id: string; readonly name: string; readonly args: unknown }
  | { readonly kind: 'answer'; readonly id: string; readonly content: unknown; readonly isError?: boolean };

const SUMMARY = '# TODOs\n\n- write tests (notes/todo.md)\n- ship it (notes/todo.md)\n- tell people (notes/todo.md)\n- i18n (src/app.ts:1)\n';
/** What the model called in responses 1 and 2 (the transcripts), and what the workspace's tools answer. */
const TURNS = [
  [
    { name: 'list_dir', args: { path: '.' }, content: '["README.md","notes","src"]', isError: false },
    { name: 'read_file', args: { path: 'notes/todo.md' }, content: '- TODO: write tests\n- TODO: ship it\n- TODO: tell people\n', isError: false },
    { name: 'search', args: { pattern: 'TODO', path: 'src' }, content: 'src/app.ts:1: export const greet = (name: string) => `hello ${name}`; // TODO: i18n', isError: false },
    { name: 'read_file', args: { path: '../../etc/passwd' }, content: expect.stringMatching(/^Denied by policy "pathSandbox\(.*"\.\.\/\.\.\/etc\/passwd"\) is outside /), isError: true },
  ],
  [{ name: 'write_file', args: { path: 'notes/summary.md', content: SUMMARY }, content: `wrote ${SUMMARY.length} characters`, isError: false }],
];

/** The history request `n` (1-based) must carry: the calls of each earlier response, then their answers. */
function expectedSteps(n: number, callId: (k: number) => string, withErrorFlag: boolean): Step[] {
  let k = 0;
  return TURNS.slice(0, n - 1).flatMap((turn) => {
    const ids = turn.map(() => callId(++k));
    return [
      ...turn.map((call, i): Step => ({ kind: 'call', id: ids[i]!, name: call.name, args: call.args })),
      ...turn.map((call, i): Step => ({ kind: 'answer', id: ids[i]!, content: call.content, ...(withErrorFlag ? { isError: call.isError } : {}) })),
    ];
  });
}

type Json = Record<string, any>; // request bodies, as the server parsed them

/** How a loop reaches its server, and how to read its requests. */
interface Loop {
  readonly script: string;
  readonly transcripts: string;
  readonly path: string;
  readonly env: (server: ReplayServer) => Record<string, string>;
  readonly apiKeyOf: (request: ReceivedRequest) => unknown;
  readonly callId: (k: number) => string;
  /** The history's calls and answers, in order. */
  readonly steps: (body: Json) => Step[];
  /** The tool names offered in the request. */
  readonly tools: (body: Json) => string[];
  /** The first request's history (besides the prompt, the instructions where the wire carries them). */
  readonly first: (body: Json) => unknown;
  /** Format rules of the provider, beyond the steps: checked on every request (`n`, 1-based). */
  readonly wellFormed: (body: Json, n: number) => void;
  /** Anthropic's tool_result carries an error flag; the others carry the text alone. */
  readonly errorFlag: boolean;
}

const chatSteps = (body: Json): Step[] =>
  (body['messages'] as Json[]).flatMap((m): Step[] =>
    m['role'] === 'assistant'
      ? ((m['tool_calls'] ?? []) as Json[]).map((c) => ({ kind: 'call', id: c['id'], name: c['function']['name'], args: JSON.parse(c['function']['arguments']) }))
      : m['role'] === 'tool'
        ? [{ kind: 'answer', id: m['tool_call_id'], content: m['content'] }]
        : [],
  );

/** Chat Completions: each assistant message with calls is followed at once by one tool message per call. */
const chatWellFormed = (body: Json): void => {
  const messages = body['messages'] as Json[];
  messages.forEach((m, i) => {
    if (m['role'] !== 'assistant') return;
    const calls = (m['tool_calls'] ?? []) as Json[];
    if ('tool_calls' in m) expect(calls.length).toBeGreaterThan(0); // OpenAI rejects an empty list
    const answers = messages.slice(i + 1, i + 1 + calls.length);
    expect(answers.map((a) => [a['role'], a['tool_call_id']])).toEqual(calls.map((c) => ['tool', c['id']]));
  });
};

const openAIEnv = (server: ReplayServer) => ({ OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'test-key' });
const bearer = (request: ReceivedRequest) => request.headers['authorization'];
const chatId = (k: number) => `call_Loop${String(k).padStart(2, '0')}AgentTranscript`;
const INSTRUCTIONS = expect.stringContaining('Paths are relative to the workspace root');

/** Chat Completions, as the OpenAI SDK and the AI SDK's OpenAI provider speak it. */
const CHAT_WIRE: Omit<Loop, 'script'> = {
  transcripts: 'openai-chat',
  path: '/v1/chat/completions',
  env: openAIEnv,
  apiKeyOf: bearer,
  callId: chatId,
  steps: chatSteps,
  tools: (body) => (body['tools'] as Json[]).map((t) => t['function']['name']),
  first: (body) => body['messages'],
  wellFormed: chatWellFormed,
  errorFlag: false,
};

const LOOPS: Record<string, Loop> = {
  anthropic: {
    script: 'examples/agents/anthropic.ts',
    transcripts: 'anthropic',
    path: '/v1/messages',
    env: (server) => ({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key' }),
    apiKeyOf: (request) => request.headers['x-api-key'] ?? request.headers['authorization'], // this SDK sends it as a bearer token
    callId: (k) => `toolu_01LoopCall${String(k).padStart(2, '0')}`,
    steps: (body) =>
      (body['messages'] as Json[]).flatMap((m): Step[] =>
        Array.isArray(m['content'])
          ? (m['content'] as Json[]).flatMap((b): Step[] =>
              b['type'] === 'tool_use'
                ? [{ kind: 'call', id: b['id'], name: b['name'], args: b['input'] }]
                : b['type'] === 'tool_result'
                  ? [{ kind: 'answer', id: b['tool_use_id'], content: b['content'], isError: b['is_error'] }]
                  : [],
            )
          : [],
      ),
    tools: (body) => (body['tools'] as Json[]).map((t) => t['name']),
    first: (body) => ({ system: body['system'], messages: body['messages'] }),
    wellFormed: (body) => {
      const messages = body['messages'] as Json[];
      expect(messages.map((m) => m['role'])).toEqual(messages.map((_, i) => (i % 2 === 0 ? 'user' : 'assistant')));
      for (const m of messages) {
        expect(m['content'].length).toBeGreaterThan(0); // no empty message
        if (!Array.isArray(m['content'])) continue;
        for (const block of m['content'] as Json[]) if (block['type'] === 'text') expect(block['text']).not.toBe('');
        // The answers of a turn: all in the one user message after it, nothing else in it.
        if ((m['content'] as Json[]).some((b) => b['type'] === 'tool_result')) expect(new Set(m['content'].map((b: Json) => b['type']))).toEqual(new Set(['tool_result']));
      }
      messages.forEach((m, i) => {
        const uses = Array.isArray(m['content']) ? (m['content'] as Json[]).filter((b) => b['type'] === 'tool_use').map((b) => b['id']) : [];
        if (m['role'] === 'assistant' && uses.length > 0) expect((messages[i + 1]?.['content'] as Json[]).map((b) => b['tool_use_id'])).toEqual(uses);
      });
    },
    errorFlag: true,
  },
  'openai-chat': { script: 'examples/agents/openai-chat.ts', ...CHAT_WIRE },
  'openai-responses': {
    script: 'examples/agents/openai-responses.ts',
    transcripts: 'openai-responses',
    path: '/v1/responses',
    env: openAIEnv,
    apiKeyOf: bearer,
    callId: chatId,
    steps: (body) =>
      (body['input'] as Json[]).flatMap((item): Step[] =>
        item['type'] === 'function_call'
          ? [{ kind: 'call', id: item['call_id'], name: item['name'], args: JSON.parse(item['arguments']) }]
          : item['type'] === 'function_call_output'
            ? [{ kind: 'answer', id: item['call_id'], content: item['output'] }]
            : [],
      ),
    tools: (body) => (body['tools'] as Json[]).map((t) => t['name']),
    first: (body) => ({ instructions: body['instructions'], input: body['input'] }),
    wellFormed: (body, n) => {
      // Each earlier response's output items go back whole — its message too, so the model sees what it
      // said — followed by one output per call.
      const kinds = (body['input'] as Json[]).map((item) => item['type'] ?? item['role']);
      const turns = TURNS.slice(0, n - 1).flatMap((turn) => ['message', ...turn.map(() => 'function_call'), ...turn.map(() => 'function_call_output')]);
      expect(kinds).toEqual(['user', ...turns]);
    },
    errorFlag: false,
  },
  // The AI SDK with its OpenAI provider (Chat Completions), on the same recorded Chat responses.
  'ai-sdk': { script: 'examples/agents/ai-sdk.ts', ...CHAT_WIRE },
};

// The durable loop with approvals (examples/agents/approvals.ts): the write suspends, the terminal's
// answer (--yes) re-enters the loop with the continuation, and the requests are the same.
LOOPS['anthropic-approvals'] = { ...LOOPS['anthropic']!, script: 'examples/agents/approvals.ts' };

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the agent loops, against a server that replays a recorded conversation', () => {
  for (const [name, loop] of Object.entries(LOOPS)) {
    it(`${loop.script}: three requests, each answering every call of the response before, in order`, async () => {
      server = await startReplayServer([1, 2, 3].map((n) => ({ path: loop.path, sse: transcript(`${loop.transcripts}-${n}`) })));
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', loop.script, '--yes', PROMPT], {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, ...loop.env(server) },
      });

      // The loop stopped when the model stopped calling tools: the third response had no calls.
      const requests = server.requests;
      expect(requests.map((r) => [r.method, r.path, loop.apiKeyOf(r)]), name).toEqual(
        [1, 2, 3].map(() => ['POST', loop.path, expect.stringContaining('test-key')]),
      );
      expect(stdout).toContain('[3] Done: notes/summary.md lists the 4 TODOs.');
      if (name === 'anthropic-approvals') expect(stdout).toMatch(/\? approve write_file \{"path":"[^"]*notes\/summary\.md".*\} \(it writes to the workspace\)\? → allowed once\n[^]*done after 3 step\(s\)/);

      const bodies = requests.map((r) => r.body as Json);
      const first = loop.first(bodies[0]!);
      if (name === 'anthropic' || name === 'anthropic-approvals') expect(first).toEqual({ system: INSTRUCTIONS, messages: [{ role: 'user', content: PROMPT }] });
      else if (name === 'openai-responses') expect(first).toEqual({ instructions: INSTRUCTIONS, input: [{ role: 'user', content: PROMPT }] });
      else expect(first).toEqual([{ role: 'system', content: INSTRUCTIONS }, { role: 'user', content: PROMPT }]);

      bodies.forEach((body, i) => {
        const where = `request ${i + 1} of ${name}`;
        expect(body['stream'], where).toBe(true);
        expect(loop.tools(body), where).toEqual(['list_dir', 'read_file', 'search', 'write_file']);
        expect(loop.steps(body), where).toEqual(expectedSteps(i + 1, loop.callId, loop.errorFlag));
        loop.wellFormed(body, i + 1);
      });
    });
  }
});
