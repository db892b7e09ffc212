import { EMPTY, map, of, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, type ApprovalAnswer, type Approver, type PipelineOptions, type ToolCall, type ToolResult } from '../../src/index.js';

// The approver in virtual time: its answer (a value, an Observable's first value) admits the call at
// the frame it comes; its stream is unsubscribed at the approval timeout and when the run is aborted.

const input = z.object({ text: z.string() });
const write = defineTool({ name: 'write', description: 'write', input, mode: 'parallel', execute: ({ text }) => text });
const call = (id: string): ToolCall => ({ id, name: 'write', args: { text: id } });

/** Each result as `id:status[:code]`. */
const status = (r: ToolResult) => [r.id, r.status, r.error?.code].filter((part) => part !== undefined).join(':');
const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** The calls through a pipeline that asks `approve` about every write, on `scheduler`. */
function asking(scheduler: TestScheduler, approve: Approver, calls: Observable<ToolCall>, options: Omit<PipelineOptions, 'tools' | 'scheduler' | 'approve'> = {}, kept: ToolResult[] = []) {
  const pipeline = createPipeline({ tools: [write], pre: [askTools(['write'])], approve, scheduler, ...options });
  return calls.pipe(pipeline.operator(), map((result) => (kept.push(result), status(result))));
}

describe('an approver in virtual time', () => {
  it('answering at once admits the call at once (a value, or of(value))', () => {
    for (const approve of [() => 'allowed-once' as const, () => of<ApprovalAnswer>('allowed-once')]) {
      const scheduler = testScheduler();
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(asking(scheduler, approve, cold('a|', { a: call('a') }))).toBe('a|', { a: 'a:ok' });
      });
    }
  });

  it('answering after 30 frames admits the call at frame 30', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const approve = () => timer(30).pipe(map((): ApprovalAnswer => 'allowed-once'));
      expectObservable(asking(scheduler, approve, cold('a|', { a: call('a') }))).toBe('30ms (a|)', { a: 'a:ok' });
    });
  });

  it('not answering within approvalTimeoutMs denies it then, and unsubscribes the approver at that moment', () => {
    const kept: ToolResult[] = [];
    const signals: AbortSignal[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const answer$ = cold<ApprovalAnswer>('-');
      const approve: Approver = (_request, signal) => (signals.push(signal), answer$);
      expectObservable(asking(scheduler, approve, cold('a|', { a: call('a') }), { approvalTimeoutMs: 50 }, kept)).toBe('50ms (a|)', { a: 'a:denied:approval_timeout' });
      expectSubscriptions(answer$.subscriptions).toBe('^ 49ms !');
    });
    expect(kept[0]?.content).toBe('Denied: calling "write" needs approval, and no answer came within 50 ms.');
    expect(signals[0]?.aborted).toBe(true); // the approver is told to stop asking too
  });

  it('a run aborted while the approver is pending: cancelled, and the approver unsubscribed then', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const answer$ = cold<ApprovalAnswer>('-');
      const controller = new AbortController();
      scheduler.schedule(() => controller.abort(new Error('the user left')), 10);
      const pipeline = createPipeline({ tools: [write], pre: [askTools(['write'])], approve: () => answer$, scheduler });
      const results = cold('a-', { a: call('a') }).pipe(pipeline.operator({ signal: controller.signal }), map(status));
      expectObservable(results).toBe('10ms (a|)', { a: 'a:cancelled:cancelled' }); // an aborted run reads no further
      expectSubscriptions(answer$.subscriptions).toBe('^ 9ms !');
    });
  });

  it('completing without an answer denies it: approval_invalid, "completed without an answer"', () => {
    const kept: ToolResult[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const answer$ = cold<ApprovalAnswer>('---|');
      expectObservable(asking(scheduler, () => answer$, cold('a|', { a: call('a') }), {}, kept)).toBe('---(a|)', { a: 'a:denied:approval_invalid' });
    });
    expect(kept[0]?.content).toBe('Denied: calling "write" needs approval, and the approver completed without an answer.');
    // Completing at once: denied at once.
    const now: ToolResult[] = [];
    of(call('b')).pipe(createPipeline({ tools: [write], pre: [askTools(['write'])], approve: () => EMPTY }).operator()).subscribe((r) => now.push(r));
    expect(now.map(status)).toEqual(['b:denied:approval_invalid']);
  });

  it('an approver stream that errors denies it with approval_error at that frame', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const answer$ = cold<ApprovalAnswer>('--#', undefined, new Error('the UI went away'));
      expectObservable(asking(scheduler, () => answer$, cold('a|', { a: call('a') }))).toBe('--(a|)', { a: 'a:denied:approval_error' });
    });
  });
});

describe('a promise approver (unchanged)', () => {
  it('admits, rejects and fails as before', async () => {
    const answers: Record<string, Approver> = {
      a: async () => 'allowed-once',
      b: async () => 'rejected',
      c: () => Promise.reject(new Error('no human')),
      d: async () => 'maybe',
    };
    const pipeline = createPipeline({ tools: [write], pre: [askTools(['write'])], approve: (request, signal) => answers[request.call.id]!(request, signal) });
    const results = await pipeline.run(['a', 'b', 'c', 'd'].map(call));
    expect(results.map(status)).toEqual(['a:ok', 'b:denied:approval_rejected', 'c:denied:approval_error', 'd:denied:approval_invalid']);
  });
});
