// examples/testing/tools.property.test.ts
// Property and marble tests of the tools in tools.ts, written as their user writes them: with
// toolstream/testing's arbitraries, scripted streams, invariant checker and marble helpers.
import fc from 'fast-check';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { createPipeline, resetRateLimits, type ApprovalAnswer, type ToolCall, type ToolOutput } from 'toolstream';
import { fromAnthropicStream } from 'toolstream/anthropic';
import { anthropicStreams, answerIn, bodyTaking, checkInvariants, invariantMonitor, scriptedStream, statusMarbles, toolCalls } from 'toolstream/testing';
import { policies, workspaceTools, type Workspace } from './tools.js';

// The tests' workspace: files in memory, every answer passed through `answer`, which each test sets
// (when fast-check's scheduler says, after virtual frames, or at once).
const files = new Map<string, string>();
let answer: <T>(value: T) => ToolOutput<T> = (value) => value;
const workspace: Workspace = {
  read: (path) => {
    const text = files.get(path);
    if (text === undefined) throw new Error(`no such file: ${path}`);
    return answer(text);
  },
  write: (path, text) => answer(void files.set(path, text)),
  search: (query) => answer([...files].filter(([, text]) => text.includes(query)).map(([path]) => path)),
};
// One set of tools for the whole file, as the app has one: every test spends the same search quota.
const tools = workspaceTools(workspace);

// What a well-behaved model sends each tool; `toolCalls` adds what a careless or hostile one sends.
const argumentsOf = {
  read_file: fc.record({ path: fc.constantFrom('README.md', 'src/index.ts', 'missing.md') }),
  write_file: fc.record({ path: fc.constantFrom('README.md', 'notes.md'), text: fc.string({ maxLength: 20 }) }),
  search: fc.record({ query: fc.string({ maxLength: 3 }) }),
};

beforeEach(() => {
  files.clear();
  files.set('README.md', '# notes').set('src/index.ts', 'export {};');
  answer = (value) => value;
});

describe('the workspace tools', () => {
  it('any batch, hostile calls included, bodies and approvals settling in any order: every invariant holds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), toolCalls({ tools: argumentsOf, hostile: true, maxLength: 5 }), fc.boolean(), async (s, calls, approves) => {
        // The search quota is kept on the default scheduler (real time here): each run starts with it
        // unspent, and at most 5 calls never wait for it.
        resetRateLimits();
        answer = (value) => s.schedule(Promise.resolve(value));
        const human: ApprovalAnswer = approves ? 'allowed-once' : 'rejected';
        const monitor = invariantMonitor();
        const pipeline = createPipeline({
          tools,
          pre: policies,
          approve: s.scheduleFunction(async () => human),
          concurrency: 2,
          execute: [monitor.execute],
          abortGraceMs: Infinity, // a slot is free only when its body settled: the bound holds exactly
        });
        const events = await s.waitFor(lastValueFrom(pipeline.events(calls).pipe(toArray())));
        const results = events.flatMap((event) => (event.type === 'result' ? [event.result] : []));
        // One result per call, in order; at most 2 bodies at once; a write alone; none unapproved.
        expect(checkInvariants({ calls, results, events, log: monitor.log, tools, concurrency: 2 })).toEqual({ ok: true });
      }),
      { numRuns: 100 },
    );
  });

  it('a fragmented Anthropic stream, parsed by the SDK: every call it carries is answered once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(anthropicStreams({ calls: toolCalls({ tools: argumentsOf, maxLength: 5 }), mode: 'fragmented' }), async (stream) => {
        resetRateLimits();
        const pipeline = createPipeline({ tools, pre: policies, approve: async () => 'allowed-once' });
        const received: ToolCall[] = [];
        const calls = fromAnthropicStream(scriptedStream('anthropic', stream.events)).pipe(tap((call) => received.push(call)));
        const results = await pipeline.run(calls);
        expect(received).toEqual(stream.calls);
        expect(results.map((result) => result.id)).toEqual(stream.calls.map((call) => call.id));
        expect(checkInvariants({ calls: received, results, tools, concurrency: Infinity })).toEqual({ ok: true });
      }),
      { numRuns: 50 },
    );
  });
});

describe('the workspace tools in virtual time', () => {
  const search = (id: string): ToolCall => ({ id, name: 'search', args: { query: 'notes' } });

  it('search keeps its quota: five start at once, the sixth when the first token is back, a second later', () => {
    // A pipeline given the TestScheduler keeps that scheduler's own tokens: the quota the real-time
    // tests above spent is not this one, and no reset is needed. (On the default scheduler, this test
    // would find their tokens spent, due back at real-time milliseconds: a test that keeps the default
    // scheduler calls resetRateLimits() first.)
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ cold, expectObservable }) => {
      answer = (value) => bodyTaking(10, value); // each search takes 10 frames
      const pipeline = createPipeline({ tools, scheduler });
      const calls = cold('(abcdef|)', { a: search('a'), b: search('b'), c: search('c'), d: search('d'), e: search('e'), f: search('f') });
      expectObservable(calls.pipe(pipeline.operator(), statusMarbles())).toBe('10ms (abcde) 993ms (f|)', {
        a: 'a:ok',
        b: 'b:ok',
        c: 'c:ok',
        d: 'd:ok',
        e: 'e:ok',
        f: 'f:ok',
      });
    });
  });

  it('a write approved 30 frames after it is asked runs then; the read before it does not wait', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ cold, expectObservable }) => {
      const pipeline = createPipeline({ tools, pre: policies, approve: () => answerIn(30, 'allowed-once'), scheduler });
      const calls = cold('ab|', { a: { id: 'a', name: 'read_file', args: { path: 'README.md' } }, b: { id: 'b', name: 'write_file', args: { path: 'notes.md', text: 'hi' } } });
      // a at frame 0; b asked at 1, approved and written at 31
      expectObservable(calls.pipe(pipeline.operator(), statusMarbles())).toBe('a 30ms (b|)', { a: 'a:ok', b: 'b:ok' });
    });
  });
});
