import { defer, map, mergeMap, NEVER, throwError, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createPipeline, renderTimeline, defineTool, toolContract, implementTool, type PipelineOptions, type RetryBackoff, type RetryOptions, type ToolCall, type ToolResult } from '../../src/index.js';

// A body's attempts follow its `plan`: 'ok:N' succeeds after N frames, 'fail:N' errors after N frames,
// 'hang' never settles (its signal is watched). `starts` records [key, attempt, frame].
let starts: [string, number, number][] = [];
let aborted: [string, number][] = [];
let now = () => 0;
const input = z.object({ key: z.string(), plan: z.array(z.string()) });
const flaky = (name: string, mode: 'parallel' | 'exclusive', retry: RetryOptions | undefined, extra: { timeoutMs?: number; idempotent?: boolean } = {}) => {
  const tried = new Map<string, number>();
  return defineTool({
    name,
    description: name,
    input,
    mode,
    idempotent: extra.idempotent ?? true,
    ...(retry === undefined ? {} : { retry }),
    ...(extra.timeoutMs === undefined ? {} : { timeoutMs: extra.timeoutMs }),
    execute: ({ key, plan }, ctx) => {
      const attempt = (tried.get(key) ?? 0) + 1;
      tried.set(key, attempt);
      starts.push([key, attempt, now()]);
      ctx.signal.addEventListener('abort', () => aborted.push([key, now()]));
      const step = plan[Math.min(attempt, plan.length) - 1]!;
      if (step === 'hang') return NEVER as Observable<string>;
      const [kind, frames] = step.split(':');
      const done = timer(Number(frames));
      return kind === 'ok' ? done.pipe(map(() => `${key}#${attempt}`)) : done.pipe(mergeMap(() => throwError(() => new Error(`${key} attempt ${attempt} failed`))));
    },
  });
};
const call = (key: string, name: string, ...plan: string[]): ToolCall => ({ id: key, name, args: { key, plan } });
const constant = (initialMs: number): RetryBackoff => ({ initialMs, factor: 1, maxMs: initialMs, jitter: 0 });

describe('retry (virtual time)', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    starts = [];
    aborted = [];
    now = () => scheduler.now();
  });
  const outcomes = (options: PipelineOptions) => {
    const pipeline = createPipeline(options);
    return (calls: Observable<ToolCall>) => calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.attempts}`));
  };

  it('runs a failed body again after the backoff; the result counts the attempts and the trace holds each error', () => {
    const tool = flaky('fetch', 'parallel', { attempts: 3, backoff: { initialMs: 2, factor: 3, maxMs: 100, jitter: 0 } });
    const results: ToolResult[] = [];
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(a|)', { a: call('a', 'fetch', 'fail:1', 'fail:1', 'ok:1') });
      // attempt 1: 0–1, delay 2; attempt 2: 3–4, delay 6; attempt 3: 10–11
      const pipeline = createPipeline({ tools: [tool] });
      expectObservable(calls.pipe(pipeline.operator(), map((r) => (results.push(r), `${r.id}:${r.status}:${r.attempts}`)))).toBe('-----------(a|)', { a: 'a:ok:3' });
    });
    expect(starts).toEqual([['a', 1, 0], ['a', 2, 3], ['a', 3, 10]]);
    const [result] = results;
    expect(result!.status === 'ok' && result!.value).toEqual(['a#3']);
    const failedAttempts = result!.trace.filter((e) => e.stage === 'execute');
    // From results the timeline has one span for the body; its title says how many attempts it was.
    expect(renderTimeline(results)).toMatch(/<title>fetch a: ok, [^<]*\(3 attempts\);[^<]* result #0/);
    expect(failedAttempts).toEqual([
      { stage: 'execute', event: 'attempt_failed', attempt: 1, delayMs: 2, error: expect.objectContaining({ code: 'tool_error', message: 'Tool "fetch" failed: a attempt 1 failed' }) },
      { stage: 'execute', event: 'attempt_failed', attempt: 2, delayMs: 6, error: expect.objectContaining({ code: 'tool_error', message: 'Tool "fetch" failed: a attempt 2 failed' }) },
    ]);
  });

  it('gives up after `attempts` bodies with the last error; maxMs caps the delay', () => {
    const tool = flaky('fetch', 'parallel', { attempts: 3, backoff: { initialMs: 4, factor: 10, maxMs: 5, jitter: 0 } });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(a|)', { a: call('a', 'fetch', 'fail:1') });
      // 0–1, delay 4, 5–6, delay min(40, 5) = 5, 11–12
      expectObservable(calls.pipe(outcomes({ tools: [tool] }))).toBe('------------(a|)', { a: 'a:error:3' });
    });
    expect(starts.map(([, , at]) => at)).toEqual([0, 5, 11]);
  });

  it('retryOn decides which failures are repeated; a throwing retryOn counts as no', () => {
    const transient = flaky('send', 'parallel', { attempts: 5, backoff: constant(1), retryOn: (e) => e.code === 'tool_error' && String(e.cause).includes('attempt 1') }, { idempotent: false });
    const throwing = flaky('other', 'parallel', { attempts: 5, backoff: constant(1), retryOn: () => { throw new Error('no'); } }, { idempotent: false });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(ab|)', { a: call('a', 'send', 'fail:1'), b: call('b', 'other', 'fail:1') });
      // a: 0–1 retried (its error says attempt 1), 2–3 not; b: 0–1 only
      expectObservable(calls.pipe(outcomes({ tools: [transient, throwing] }))).toBe('---(ab|)', { a: 'a:error:2', b: 'b:error:1' });
    });
  });

  it('retries a timeout: each attempt has its own time limit, and the next starts after the aborted one', () => {
    const tool = flaky('slow', 'parallel', { attempts: 2, backoff: constant(1) }, { timeoutMs: 3 });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(a|)', { a: call('a', 'slow', 'hang', 'ok:2') });
      // attempt 1 times out at 3 (its Observable is unsubscribed: finished), delay 1, attempt 2 runs 4–6
      expectObservable(calls.pipe(outcomes({ tools: [tool] }))).toBe('------(a|)', { a: 'a:ok:2' });
    });
    expect(aborted).toEqual([['a', 3]]);
    expect(starts).toEqual([['a', 1, 0], ['a', 2, 4]]);
  });

  it('holds the slot during the backoff: concurrency counts a call between its attempts', () => {
    const tool = flaky('fetch', 'parallel', { attempts: 2, backoff: constant(5) });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(ab|)', { a: call('a', 'fetch', 'fail:1', 'ok:1'), b: call('b', 'fetch', 'ok:1') });
      // concurrency 1: a 0–1, delay 1–6, a again 6–7; only then b 7–8
      expectObservable(calls.pipe(outcomes({ tools: [tool], concurrency: 1 }))).toBe('-------a(b|)', { a: 'a:ok:2', b: 'b:ok:1' });
    });
    expect(starts.map(([k, n, at]) => `${k}${n}@${at}`)).toEqual(['a1@0', 'a2@6', 'b1@7']);
  });

  it('an exclusive call stays alone between its attempts', () => {
    const write = flaky('write', 'exclusive', { attempts: 2, backoff: constant(3) });
    const read = flaky('read', 'parallel', undefined);
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(ab|)', { a: call('a', 'write', 'fail:1', 'ok:1'), b: call('b', 'read', 'ok:1') });
      expectObservable(calls.pipe(outcomes({ tools: [write, read] }))).toBe('-----a(b|)', { a: 'a:ok:2', b: 'b:ok:1' });
    });
    expect(starts.map(([k, n, at]) => `${k}${n}@${at}`)).toEqual(['a1@0', 'a2@4', 'b1@5']);
  });

  it('cancel-rest during the backoff cancels the call, frees its slot and starts no attempt after', () => {
    const tool = flaky('fetch', 'parallel', { attempts: 3, backoff: constant(10) });
    const boom = flaky('boom', 'parallel', undefined);
    scheduler.run(({ cold, expectObservable }) => {
      // one turn: a fails at 1 and waits 10; b fails at 3 and cancels the rest of the turn (a, in its delay);
      // c, of another turn, waited for a slot (concurrency 2) and gets a's at 3
      const calls = cold('(abc|)', { a: call('a', 'fetch', 'fail:1'), b: call('b', 'boom', 'fail:3'), c: { ...call('c', 'boom', 'ok:4'), turn: 'other' } });
      expectObservable(calls.pipe(outcomes({ tools: [tool, boom], onError: 'cancel-rest', concurrency: 2 }))).toBe('---(ab)(c|)', { a: 'a:cancelled:1', b: 'b:error:1', c: 'c:ok:1' });
    });
    expect(starts.map(([k, n, at]) => `${k}${n}@${at}`)).toEqual(['a1@0', 'b1@0', 'c1@3']);
  });

  it('jitter takes up to its fraction off each delay, drawn from the injected random', () => {
    const draws = [0.5, 1];
    const tool = flaky('fetch', 'parallel', { attempts: 3, backoff: { initialMs: 8, factor: 2, maxMs: 100, jitter: 0.5 }, random: () => draws.shift()! });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(a|)', { a: call('a', 'fetch', 'fail:1', 'fail:1', 'ok:1') });
      // delay 1: 8 - 8 * 0.5 * 0.5 = 6 (1–7); delay 2: 16 - 16 * 0.5 * 1 = 8 (8–16)
      expectObservable(calls.pipe(outcomes({ tools: [tool] }))).toBe('-----------------(a|)', { a: 'a:ok:3' });
    });
    expect(starts.map(([, , at]) => at)).toEqual([0, 7, 16]);
  });

  it('reports each retry as an event (attempt, error, delayMs), between one started and one finished', () => {
    const tool = flaky('fetch', 'parallel', { attempts: 2, backoff: constant(4) });
    const seen: string[] = [];
    scheduler.run(({ cold }) => {
      const calls = cold('(a|)', { a: call('a', 'fetch', 'fail:2', 'ok:1') });
      createPipeline({ tools: [tool] })
        .events(calls)
        .subscribe((e) => seen.push(`${e.type === 'retry' ? `retry:${e.attempt}:${e.error.code}:${e.delayMs}` : e.type}@${scheduler.now()}`));
    });
    // attempt 1 fails at 2, attempt 2 runs 6–7
    expect(seen).toEqual(['received@0', 'decided@0', 'started@0', 'retry:1:tool_error:4@2', 'finished@7', 'result@7']);
  });

  it('the run signal aborting during the backoff answers the call cancelled, and no attempt starts after', () => {
    const tool = flaky('fetch', 'parallel', { attempts: 3, backoff: constant(10) });
    const controller = new AbortController();
    scheduler.run(({ cold, expectObservable }) => {
      scheduler.schedule(() => controller.abort(), 5);
      const calls = cold('(a|)', { a: call('a', 'fetch', 'fail:1') });
      const pipeline = createPipeline({ tools: [tool] });
      expectObservable(defer(() => calls.pipe(pipeline.operator({ signal: controller.signal }), map((r) => `${r.id}:${r.status}:${r.attempts}`)))).toBe('-----(a|)', { a: 'a:cancelled:1' });
    });
    expect(starts.length).toBe(1);
    scheduler.flush();
    expect(starts.length).toBe(1);
  });

  it('unsubscribing during the backoff clears the delay: no attempt starts later', () => {
    const tool = flaky('fetch', 'parallel', { attempts: 3, backoff: constant(10) });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(a|)', { a: call('a', 'fetch', 'fail:1') });
      expectObservable(calls.pipe(outcomes({ tools: [tool] })), '^----!').toBe('');
    });
    expect(starts.length).toBe(1);
  });
});

describe('retry options', () => {
  const base = { name: 't', description: 't', input: z.object({}), execute: () => 1 };
  it('is allowed only for idempotent tools or with an explicit retryOn', () => {
    expect(() => defineTool({ ...base, retry: { attempts: 2 } })).toThrow(ConfigError);
    expect(() => defineTool({ ...base, retry: { attempts: 2 } })).toThrow(/idempotent: true/);
    expect(defineTool({ ...base, idempotent: true, retry: { attempts: 2 } }).retry).toMatchObject({ attempts: 2, initialMs: 200, factor: 2, maxMs: 30_000, jitter: 0 });
    expect(defineTool({ ...base, retry: { attempts: 2, retryOn: () => true } }).retry?.attempts).toBe(2);
  });
  it('rejects malformed values eagerly, naming the option', () => {
    const bad: [unknown, RegExp][] = [
      [{ attempts: 0 }, /retry\.attempts/],
      [{ attempts: 1.5 }, /retry\.attempts/],
      [{ attempts: 101 }, /retry\.attempts/],
      [{ attempts: 2, backoff: { initialMs: -1 } }, /retry\.backoff\.initialMs/],
      [{ attempts: 2, backoff: { factor: 0.5 } }, /retry\.backoff\.factor/],
      [{ attempts: 2, backoff: { initialMs: 100, maxMs: 10 } }, /retry\.backoff\.maxMs/],
      [{ attempts: 2, backoff: { jitter: 1.5 } }, /retry\.backoff\.jitter/],
      [{ attempts: 2, retryOn: 'yes' }, /retry\.retryOn/],
      [{ attempts: 2, random: 4 }, /retry\.random/],
      ['3', /`retry`/],
    ];
    for (const [retry, message] of bad) {
      expect(() => defineTool({ ...base, idempotent: true, retry: retry as RetryOptions })).toThrow(message);
    }
  });
  it('a contract carries it, checked the same way, and implementTool keeps it', () => {
    expect(() => toolContract({ name: 'c', description: 'c', input: z.object({}), retry: { attempts: 2 } })).toThrow(/toolContract: `retry`/);
    const contract = toolContract({ name: 'c', description: 'c', input: z.object({}), idempotent: true, retry: { attempts: 4, backoff: { initialMs: 10 } } });
    expect(implementTool(contract, () => 1).retry).toBe(contract.retry);
  });
});
