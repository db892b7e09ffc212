// The cases the runtime matrix runs in every runtime (Node 22 and 24, Bun, Deno, workerd, Chromium):
// portable code, web-standard APIs only — no `node:` import, no `process`, no `Buffer` — so what fails
// in a runtime is the library's, not the test's. Bundled once by esbuild (`bundle.ts`) with the library,
// rxjs, zod and ai inlined. Each case prints one JSON line of what it saw, with nothing that varies from
// run to run (no timings, no random ids), so the test compares every runtime's lines with the expected
// ones (`expected.ts`). A case that throws prints its error instead, and the other cases still run.
import { firstValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type Approver, type PipelineEvent, type ToolResult } from '../../src/index.js';
import { fromAISDKStream, type AISDKStreamPart } from '../../src/adapters/ai-sdk/index.js';

/** The cases' names, in the order they print. */
export const CASES = ['quick-start', 'approver', 'cancel-rest', 'throwing-observer', 'events', 'durable', 'ai-sdk-stream'] as const;

const FILES: Readonly<Record<string, string>> = { 'package.json': '{"name":"toolstream"}', 'notes.md': '# notes\nfirst\nsecond' };

/** The quick start's tool, reading from memory instead of the file system. */
const readFile = defineTool({
  name: 'read_file',
  description: 'Read a UTF-8 file',
  input: z.object({ path: z.string() }),
  mode: 'parallel',
  timeoutMs: 5_000,
  execute: async ({ path }, { signal }) => {
    signal.throwIfAborted();
    const text = FILES[path];
    if (text === undefined) throw new Error(`no file ${path}`);
    return text;
  },
});

const brief = (r: ToolResult) => (r.status === 'ok' ? [r.id, r.status, r.content] : [r.id, r.status, r.error.code]);

async function quickStart(): Promise<unknown> {
  const pipeline = createPipeline({ tools: [readFile], concurrency: 10 });
  const results = await pipeline.run([
    { id: 'call_1', name: 'read_file', args: '{"path":"package.json"}' },
    { id: 'call_2', name: 'read_file', args: { path: 42 } },
  ]);
  return results.map((r) => [r.id, r.status, r.status === 'ok' ? r.content.length : r.error.code]);
}

async function approver(): Promise<unknown> {
  const writeFile = defineTool({ name: 'write_file', description: 'Write', input: z.object({ path: z.string() }), execute: ({ path }) => `wrote ${path}` });
  const asked: string[] = [];
  const approve: Approver = async ({ tool, args, reasons }, signal) => {
    signal.throwIfAborted();
    asked.push(`${tool.name} ${JSON.stringify(args)} (${reasons.join('; ')})`);
    return tool.name === 'read_file' ? 'allowed-once' : 'rejected';
  };
  const pipeline = createPipeline({ tools: [readFile, writeFile], pre: [askTools(['*'])], approve });
  const results = await pipeline.run([
    { id: 'r', name: 'read_file', args: { path: 'notes.md' } },
    { id: 'w', name: 'write_file', args: { path: 'notes.md' } },
  ]);
  return { results: results.map(brief), asked: asked.sort() };
}

async function cancelRest(): Promise<unknown> {
  const ran: string[] = [];
  const step = defineTool({
    name: 'step',
    description: 'A step that fails when told to',
    input: z.object({ fail: z.boolean() }),
    onError: 'cancel-rest',
    execute: ({ fail }, { callId }) => {
      ran.push(callId);
      if (fail) throw new Error('step failed');
      return 'done';
    },
  });
  const results = await createPipeline({ tools: [step] }).run([
    { id: 's1', name: 'step', args: { fail: false } },
    { id: 's2', name: 'step', args: { fail: true } },
    { id: 's3', name: 'step', args: { fail: false } },
  ]);
  const cancels = results.map((r) => (r.status !== 'ok' && r.error.code === 'cancelled' ? [r.id, r.error.reason, r.error.byCallId ?? null] : null)).filter(Boolean);
  return { results: results.map(brief), ran, cancels };
}

async function throwingObserver(): Promise<unknown> {
  const calls = [
    { id: 'o1', name: 'read_file', args: { path: 'package.json' } },
    { id: 'o2', name: 'read_file', args: { path: 'missing.md' } },
  ];
  const broken = () => {
    throw new Error('observer broke');
  };
  // The default channel for the observer's error (a warning): the run must not notice.
  const byDefault = await createPipeline({ tools: [readFile], observers: [broken] }).run(calls);
  // A channel of our own, to see that each failure is reported, once.
  const reported: string[] = [];
  const own = await createPipeline({
    tools: [readFile],
    observers: [broken],
    onObserverError: (error, result) => void reported.push(`${result.id}: ${error instanceof Error ? error.message : String(error)}`),
  }).run(calls);
  return { byDefault: byDefault.map(brief), own: own.map(brief), reported: reported.sort() };
}

async function events(): Promise<unknown> {
  const ask = defineTool({ name: 'ask_me', description: 'Needs approval', input: z.object({}), execute: () => 'asked' });
  const pipeline = createPipeline({ tools: [readFile, ask], pre: [askTools(['ask_me'])], approve: () => 'allowed-once' });
  const seen: PipelineEvent[] = await firstValueFrom(
    pipeline
      .events([
        { id: 'e1', name: 'read_file', args: { path: 'notes.md' } },
        { id: 'e2', name: 'ask_me', args: {} },
        { id: 'e3', name: 'nope', args: {} },
      ])
      .pipe(toArray()),
  );
  // Each call's events are in a fixed order; how the calls' events interleave is not fixed.
  const byCall: Record<string, string[]> = {};
  for (const e of seen) (byCall[e.id] ??= []).push(e.type);
  return { byCall, results: seen.flatMap((e) => (e.type === 'result' ? [e.id] : [])) };
}

const SECRET = 'a secret of at least 32 bytes, kept from the model, for the matrix';

async function durable(): Promise<unknown> {
  const journal = memoryJournal();
  const writes: string[] = [];
  const keys: Record<string, string> = {};
  const writeFile = defineTool({
    name: 'write_file',
    description: 'Write',
    input: z.object({ path: z.string(), text: z.string() }),
    execute: ({ path }, { callId, idempotencyKey }) => {
      writes.push(path);
      keys[callId] = idempotencyKey;
      return `wrote ${path}`;
    },
  });
  const pipeline = createPipeline({ tools: [readFile, writeFile], pre: [askTools(['write_file'])], approve: suspendApprovals(), journal, approvalSecret: SECRET });
  const turn = 'conversation-7/response-3';
  const first = await pipeline.run(
    [
      { id: 'd1', name: 'read_file', args: { path: 'notes.md' } },
      { id: 'd2', name: 'write_file', args: { path: 'a.md', text: 'yes' } },
      { id: 'd3', name: 'write_file', args: { path: 'b.md', text: 'no' } },
    ],
    { turn },
  );
  const pending = await pipeline.pendingApprovals(turn);
  const tokens = await Promise.all(pending.map(async (p) => ({ callId: p.callId, tool: p.tool, reasons: p.reasons, ...(await tokenFacts(p.token)) })));
  const answers = pending.map((p) => ({ token: p.token, answer: p.callId === 'd2' ? ('allowed-once' as const) : ('rejected' as const) }));
  const resumed = await pipeline.resume(turn, { answers });
  // Once more, with no answers: the ended turn is replayed from the journal, and nothing runs again.
  const again = (await pipeline.resume(turn)).map(brief);
  return { first: first.map(brief), tokens, resumed: resumed.map(brief), writes, keys, again };
}

/**
 * What a runtime's token says, checked with WebCrypto's own HMAC-SHA256: its signature holds, and its
 * arguments' hash (a SHA-256 of the arguments) — the same bytes on every runtime, so a token made in
 * one is valid in another.
 */
async function tokenFacts(token: string): Promise<{ signed: boolean; argsHash: unknown; signedFor: unknown }> {
  const [body = '', mac = ''] = token.split('.');
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = base64url(new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(body))));
  const claims = JSON.parse(new TextDecoder().decode(fromBase64url(body))) as { argsHash?: unknown; callId?: unknown };
  return { signed: expected === mac, argsHash: claims.argsHash, signedFor: claims.callId };
}

const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const fromBase64url = (text: string) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));

/** A step of AI SDK v6 parts (as `streamText(...).fullStream` gives them) by hand: two complete calls, one with an unknown tool, and one cut off by the token limit. */
const HAND_MADE: readonly (AISDKStreamPart & Record<string, unknown>)[] = [
  { type: 'start' },
  { type: 'start-step', request: {}, warnings: [] },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', text: 'Reading.' },
  { type: 'text-end', id: 't' },
  { type: 'tool-input-start', id: 'a1', toolName: 'read_file' },
  { type: 'tool-input-delta', id: 'a1', delta: '{"path":"notes.md"}' },
  { type: 'tool-input-end', id: 'a1' },
  { type: 'tool-call', toolCallId: 'a1', toolName: 'read_file', input: { path: 'notes.md' } },
  { type: 'tool-call', toolCallId: 'a2', toolName: 'delete_all', input: {}, invalid: true, error: 'no such tool' },
  { type: 'tool-input-start', id: 'a3', toolName: 'read_file' },
  { type: 'tool-input-delta', id: 'a3', delta: '{"path":"pack' },
  { type: 'finish-step', response: {}, usage: {}, finishReason: 'length', providerMetadata: undefined },
  { type: 'finish', finishReason: 'length', totalUsage: {} },
];

async function aiSdkStream(): Promise<unknown> {
  // A ReadableStream, as `fullStream` is one.
  const stream = new ReadableStream<AISDKStreamPart>({
    start(controller) {
      for (const part of HAND_MADE) controller.enqueue(part);
      controller.close();
    },
  });
  const results = await createPipeline({ tools: [readFile] }).run(fromAISDKStream(stream));
  return results.map(brief);
}

/** What a runtime passes to {@link runCases}. */
export interface CaseInput {
  /** Called with each case's line: one JSON object, `{ case, result }` or `{ case, error }`. */
  readonly print: (line: string) => void;
}

/** Runs every case, in order, printing one line each; resolves once all printed. */
export async function runCases({ print }: CaseInput): Promise<void> {
  const run: Record<(typeof CASES)[number], () => Promise<unknown>> = {
    'quick-start': quickStart,
    approver,
    'cancel-rest': cancelRest,
    'throwing-observer': throwingObserver,
    events,
    durable,
    'ai-sdk-stream': aiSdkStream,
  };
  for (const name of CASES) {
    try {
      print(JSON.stringify({ case: name, result: await run[name]() }));
    } catch (error) {
      print(JSON.stringify({ case: name, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }));
    }
  }
}
