import { from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  askTools,
  createPipeline,
  defineTool,
  memoryJournal,
  suspendApprovals,
  type PostPolicy,
  type ResultDraft,
  type ResultMiddleware,
  type ToolCall,
  type ToolResult,
} from '../../src/index.js';
import { virtualClock } from './virtualClock.js';

const input = z.object({ text: z.string() });
const echo = defineTool({ name: 'echo', description: 'echo', input, mode: 'parallel', execute: ({ text }) => ({ text }), render: ({ text }) => text });
const failing = defineTool({ name: 'fail', description: 'fails', input, mode: 'parallel', execute: ({ text }) => Promise.reject(new Error(text)) });
const call = (id: string, text: string, name = 'echo'): ToolCall => ({ id, name, args: { text } });

const redactKeys: ResultMiddleware = function redactKeys(draft) {
  draft.content = draft.content.replaceAll(/sk-[a-z0-9]+/g, '[redacted]');
};

describe('the result chain', () => {
  it('redacts content and adds meta before the result is frozen, after post-execute', async () => {
    const addsMeta: PostPolicy = () => ({ kind: 'accept', meta: { checked: true } });
    const stamp: ResultMiddleware = (draft) => {
      draft.meta.region = 'eu';
    };
    const pipeline = createPipeline({ tools: [echo], post: [addsMeta], result: [redactKeys, stamp] });
    const [result] = await pipeline.run([call('a', 'key sk-abc123 leaked')]);
    expect(result?.content).toBe('key [redacted] leaked');
    expect(result?.meta).toEqual({ checked: true, region: 'eu' });
    expect(result?.value).toEqual({ text: 'key sk-abc123 leaked' }); // the host's value: only content was redacted
    expect(Object.isFrozen(result) && Object.isFrozen(result?.meta)).toBe(true);
  });

  it('may change the value of an ok result; sees the result as built, status and error included', async () => {
    const seen: ToolResult[] = [];
    const wrap: ResultMiddleware = (draft) => {
      seen.push(draft.result);
      if (draft.result.status === 'ok') draft.value = { wrapped: draft.value };
      else draft.value = 'never used';
    };
    const results = await createPipeline({ tools: [echo, failing], result: [wrap] }).run([call('a', 'x'), call('b', 'boom', 'fail')]);
    expect(results.map((r) => [r.status, r.value])).toEqual([['ok', { wrapped: { text: 'x' } }], ['error', undefined]]);
    expect(seen.map((r) => [r.id, r.status, r.error?.code])).toEqual([['a', 'ok', undefined], ['b', 'error', 'tool_error']]);
  });

  it('wraps denied and failed results too, and never changes their status or error', async () => {
    const note: ResultMiddleware = (draft) => {
      draft.content = `[${draft.result.status}] ${draft.content}`;
    };
    const results = await createPipeline({ tools: [echo, failing], result: [note], pre: [askTools(['echo'])] }).run([call('a', 'x'), call('b', 'boom', 'fail')]);
    expect(results.map((r) => [r.status, r.error?.code])).toEqual([['denied', 'approval_unavailable'], ['error', 'tool_error']]);
    expect(results[0]?.content).toMatch(/^\[denied\] /);
    expect(results[1]?.content).toBe('[error] Tool "fail" failed: boom');
  });

  it('runs the tool\'s own chain inside the pipeline\'s, and the whole chain even when one never calls next()', async () => {
    const log: string[] = [];
    const step = (name: string, callsNext: boolean): ResultMiddleware => async (draft, next) => {
      log.push(`${name} before`);
      if (callsNext) await next();
      log.push(`${name} after`);
      return draft;
    };
    const tool = defineTool({ name: 'echo', description: 'echo', input, execute: ({ text }) => text, chains: { result: [step('tool', true)] } });
    await createPipeline({ tools: [tool], result: [step('outer', true), step('forgetful', false)] }).run([call('a', 'x')]);
    expect(log).toEqual(['outer before', 'forgetful before', 'forgetful after', 'tool before', 'tool after', 'outer after']);
  });

  it('is synchronous while every middleware answers at once', () => {
    const sync = defineTool({ name: 'echo', description: 'echo', input, mode: 'parallel', execute: ({ text }) => text });
    const out: string[] = [];
    createPipeline({ tools: [sync], result: [redactKeys] })
      .operator()(from([call('a', 'sk-1')]))
      .subscribe((result) => out.push(result.content));
    expect(out).toEqual(['[redacted]']);
  });

  describe('fails closed', () => {
    const withheld = (result: ToolResult | undefined) => [result?.status, result?.error?.code, result?.error?.code === 'policy_error' && result.error.stage, result?.value];

    it('a throw withholds an ok output: error, policy_error at stage result; a failed result keeps its own', async () => {
      const boom: ResultMiddleware = function boom() {
        throw new Error('metrics down');
      };
      const results = await createPipeline({ tools: [echo, failing], result: [boom] }).run([call('a', 'secret'), call('b', 'bad', 'fail')]);
      expect(withheld(results[0])).toEqual(['error', 'policy_error', 'result', undefined]);
      expect(results[0]?.content).toBe('The output of "echo" was withheld: result middleware "boom" threw: metrics down (middleware fail closed).');
      expect(results[0]?.trace).toContainEqual({ stage: 'result', event: 'failed', policy: 'boom', message: 'threw: metrics down' });
      expect([results[1]?.status, results[1]?.error?.code, results[1]?.content]).toEqual(['error', 'tool_error', 'Tool "fail" failed: bad']);
    });

    it('an inner middleware\'s throw is not undone by an outer one that catches its next()', async () => {
      const forgiving: ResultMiddleware = async (draft, next) => {
        await next().catch(() => undefined);
      };
      const thrower: ResultMiddleware = async () => Promise.reject(new Error('no'));
      const [result] = await createPipeline({ tools: [echo], result: [forgiving, thrower] }).run([call('a', 'x')]);
      expect(withheld(result)).toEqual(['error', 'policy_error', 'result', undefined]);
    });

    it('an answer that is not the draft, next() twice, or a draft left broken', async () => {
      const copy: ResultMiddleware = (draft) => ({ ...draft, content: 'copied' }) as ResultDraft;
      const twice: ResultMiddleware = async (draft, next) => {
        await next();
        await next().catch(() => undefined);
      };
      const broken: ResultMiddleware = (draft) => {
        draft.meta = null as never;
      };
      for (const middleware of [copy, twice, broken]) {
        const [result] = await createPipeline({ tools: [echo], result: [middleware] }).run([call('a', 'x')]);
        expect(withheld(result)).toEqual(['error', 'policy_error', 'result', undefined]);
      }
    });

    it('no answer within policyTimeoutMs', async () => {
      const clock = virtualClock();
      const never: ResultMiddleware = function never() {
        return new Promise<void>(() => undefined);
      };
      const pipeline = createPipeline({ tools: [echo], result: [never], policyTimeoutMs: 100, scheduler: clock.scheduler });
      const [result] = await clock.run(pipeline.run([call('a', 'x')]));
      expect(withheld(result)).toEqual(['error', 'policy_error', 'result', undefined]);
      expect(result?.content).toMatch(/result middleware "never" did not decide within 100 ms/);
      expect(clock.now()).toBe(100);
    });
  });

  it('results replayed from a durable turn\'s journal were wrapped once and do not pass it again', async () => {
    const journal = memoryJournal();
    const wrapped: string[] = [];
    const count: ResultMiddleware = (draft) => {
      wrapped.push(draft.result.id);
      draft.content = `${draft.content} (wrapped)`;
    };
    const write = defineTool({ name: 'write', description: 'w', input, execute: ({ text }) => `wrote ${text}` });
    const options = { tools: [echo, write], journal, approvalSecret: 'a test secret that is long enough to sign with', pre: [askTools(['write'])], approve: suspendApprovals(), result: [count] };
    const first = await createPipeline(options).run([call('a', 'x'), call('w', 'y', 'write')], { turn: 't' });
    expect(first.map((r) => [r.status, r.content])).toEqual([['ok', 'x (wrapped)'], ['suspended', expect.stringMatching(/\(wrapped\)$/)]]);
    expect([...wrapped].sort()).toEqual(['a', 'w']); // in completion order: the suspended write came first

    const later = createPipeline(options);
    const [approval] = await later.pendingApprovals('t');
    const resumed = await later.resume('t', { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
    expect(resumed.map((r) => [r.status, r.content])).toEqual([['ok', 'x (wrapped)'], ['ok', 'wrote y (wrapped)']]);
    expect(wrapped.slice(2)).toEqual(['w']); // a was replayed as the model saw it: not wrapped again
  });
});
