import { EMPTY, map, Observable, of, retry, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  allowTools,
  askTools,
  createPipeline,
  defineTool,
  type PipelineOptions,
  type PostPolicy,
  type PreDecision,
  type PrePolicy,
  type StartVerdict,
  type ToolCall,
  type ToolResult,
} from '../../src/index.js';

// The pre- and post-execute chains and start checks in virtual time: a member answering with an
// Observable is decided at the frame its first value comes, and a synchronous chain stays synchronous.

const input = z.object({ text: z.string() });
const tool = (name: string) => defineTool({ name, description: name, input, mode: 'parallel', execute: ({ text }) => text });
const tools = [tool('write'), tool('read')];
const call = (id: string, name: string): ToolCall => ({ id, name, args: { text: id } });
const named = (name: string, policy: PrePolicy): PrePolicy => Object.defineProperty(policy, 'name', { value: name });
const namedPost = (name: string, policy: PostPolicy): PostPolicy => Object.defineProperty(policy, 'name', { value: name });
const deny: PreDecision = { decision: 'deny', reason: 'not now' };

/** Each result as `id:status[:code]`. */
const status = (r: ToolResult) => [r.id, r.status, r.error?.code].filter((part) => part !== undefined).join(':');

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** Runs `calls` through a pipeline on `scheduler`, and keeps the results for a closer look. */
function through(scheduler: TestScheduler, options: Omit<PipelineOptions, 'tools' | 'scheduler'>, calls: Observable<ToolCall>, kept: ToolResult[] = []) {
  const pipeline = createPipeline({ tools, scheduler, ...options });
  return calls.pipe(pipeline.operator(), map((result) => (kept.push(result), status(result))));
}

describe('pre-execute policies answering with an Observable (virtual time)', () => {
  it('a policy answering cold("--a") is decided at frame 2', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const later = named('later', () => cold('--a', { a: deny }));
      expectObservable(through(scheduler, { pre: [later] }, cold('a|', { a: call('a', 'write') }))).toBe('--(a|)', { a: 'a:denied:denied' });
    });
  });

  it('a policy whose stream completes without a value fails closed: policy_error "completed without answering"', () => {
    const kept: ToolResult[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const empty = named('empty', () => EMPTY);
      expectObservable(through(scheduler, { pre: [empty] }, cold('a|', { a: call('a', 'write') }), kept)).toBe('a|', { a: 'a:denied:policy_error' });
    });
    expect(kept[0]?.content).toBe('Denied: pre-execute policy "empty" completed without answering (policies fail closed).');
  });

  it('a policy whose stream errors when its signal aborts still fails as "did not decide within", at the deadline', () => {
    const kept: ToolResult[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const listening = named('listening', (ctx) => new Observable<PreDecision>((subscriber) => ctx.signal.addEventListener('abort', () => subscriber.error(ctx.signal.reason))));
      expectObservable(through(scheduler, { pre: [listening], policyTimeoutMs: 40 }, cold('a|', { a: call('a', 'write') }), kept)).toBe('40ms (a|)', { a: 'a:denied:policy_error' });
    });
    expect(kept[0]?.content).toBe('Denied: pre-execute policy "listening" did not decide within 40 ms (policies fail closed).');
  });

  it('next().pipe(map(...)) tightens what the rest decided, synchronously', () => {
    const kept: ToolResult[] = [];
    const tighten = named('tighten', (_ctx, next) => next().pipe(map((d): PreDecision => (d.decision === 'allow' ? deny : d))));
    const counted: string[] = [];
    const look = named('look', (ctx) => void counted.push(ctx.call.id));
    of(call('a', 'write')).pipe(createPipeline({ tools, pre: [tighten, look] }).operator()).subscribe((r) => kept.push(r));
    // Before subscribe returned: nothing in the chain waited.
    expect(kept.map(status)).toEqual(['a:denied:denied']);
    expect(counted).toEqual(['a']);
  });

  it('a policy that retries next() after it failed is refused: the same error, a retry_refused entry, the rest run once', () => {
    const kept: ToolResult[] = [];
    let runs = 0;
    const twice = named('twice', (_ctx, next) => {
      void next();
      return next().pipe(retry(2)); // next() twice fails; retrying that must not run the rest again
    });
    const counter = named('counter', () => void runs++);
    of(call('a', 'write')).pipe(createPipeline({ tools, pre: [twice, counter] }).operator()).subscribe((r) => kept.push(r));
    expect(kept.map(status)).toEqual(['a:denied:policy_error']);
    expect(kept[0]?.content).toMatch(/policy "twice" threw: next\(\) called twice in pre-execute policy "twice"/);
    expect(kept[0]?.trace.filter((entry) => entry.event === 'retry_refused')).toEqual([
      { stage: 'pre', event: 'retry_refused', policy: 'twice' },
      { stage: 'pre', event: 'retry_refused', policy: 'twice' },
    ]);
    expect(runs).toBe(1);
  });

  it('askTools + allowTools, a synchronous approver and a synchronous body: decided and answered before subscribe() returns', () => {
    const kept: ToolResult[] = [];
    const pipeline = createPipeline({ tools, pre: [askTools(['write']), allowTools(['read'])], defaultDecision: 'ask', approve: () => 'allowed-once' });
    of(call('w', 'write'), call('r', 'read')).pipe(pipeline.operator()).subscribe((r) => kept.push(r));
    expect(kept.map(status)).toEqual(['w:ok', 'r:ok']);
    expect(kept[0]?.trace).toContainEqual({ stage: 'approval', event: 'answer', answer: 'allowed-once' });
  });
});

describe('post-execute policies answering with an Observable (virtual time)', () => {
  it('a post policy answering after 3 frames holds the result until frame 3', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const stamp = namedPost('stamp', () => timer(3).pipe(map(() => ({ kind: 'accept' as const, content: 'stamped' }))));
      const kept: ToolResult[] = [];
      expectObservable(through(scheduler, { post: [stamp] }, cold('a|', { a: call('a', 'read') }), kept)).toBe('---(a|)', { a: 'a:ok' });
    });
  });

  it('a post policy that never answers is unsubscribed at policyTimeoutMs and withholds the output', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const never$ = cold<{ kind: 'accept' }>('-');
      const stuck = namedPost('stuck', () => never$);
      expectObservable(through(scheduler, { post: [stuck], policyTimeoutMs: 20 }, cold('a|', { a: call('a', 'read') }))).toBe('20ms (a|)', { a: 'a:error:policy_error' });
      expectSubscriptions(never$.subscriptions).toBe('^ 19ms !');
    });
  });
});

/** A policy registering a start check that never answers (`never$`, to read its subscriptions). */
function stuckCheck(cold: TestScheduler['createColdObservable']) {
  const never$ = cold<StartVerdict>('-');
  const stuck = named('stuck', (ctx) => {
    ctx.beforeStart(() => never$);
    return undefined;
  });
  return { never$, stuck };
}

describe('start checks answering with an Observable (virtual time)', () => {
  it('a check answering a deny after 7 frames denies the call at frame 7, before its body', () => {
    const kept: ToolResult[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const gone = named('gone', (ctx) => {
        ctx.beforeStart(() => timer(7).pipe(map((): StartVerdict => ({ decision: 'deny', reason: 'the file is gone' }))));
        return undefined;
      });
      expectObservable(through(scheduler, { pre: [gone] }, cold('a|', { a: call('a', 'write') }), kept)).toBe('7ms (a|)', { a: 'a:denied:denied' });
    });
    expect(kept[0]?.trace).toContainEqual({ stage: 'start', event: 'decision', policy: 'gone', decision: 'deny', reason: 'the file is gone' });
  });

  it('a check answering allow at once starts the body synchronously', () => {
    const kept: ToolResult[] = [];
    const fine = named('fine', (ctx) => {
      ctx.beforeStart(() => of<StartVerdict>({ decision: 'allow' }));
      return undefined;
    });
    of(call('a', 'write')).pipe(createPipeline({ tools, pre: [fine] }).operator()).subscribe((r) => kept.push(r));
    expect(kept.map(status)).toEqual(['a:ok']);
  });

  it('a check pending when the run is aborted is unsubscribed then, and the call cancelled', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const { never$, stuck } = stuckCheck(cold);
      const controller = new AbortController();
      scheduler.schedule(() => controller.abort(), 5);
      const pipeline = createPipeline({ tools, pre: [stuck], scheduler });
      expectObservable(cold('a-', { a: call('a', 'write') }).pipe(pipeline.operator({ signal: controller.signal }), map(status))).toBe('5ms (a|)', { a: 'a:cancelled:cancelled' });
      expectSubscriptions(never$.subscriptions).toBe('^ 4ms !');
    });
  });

  it('a check that never answers is unsubscribed at policyTimeoutMs and the call denied', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const { never$, stuck } = stuckCheck(cold);
      expectObservable(through(scheduler, { pre: [stuck], policyTimeoutMs: 30 }, cold('a|', { a: call('a', 'write') }))).toBe('30ms (a|)', { a: 'a:denied:policy_error' });
      expectSubscriptions(never$.subscriptions).toBe('^ 29ms !');
    });
  });
});
