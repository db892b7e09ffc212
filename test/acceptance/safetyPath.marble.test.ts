import { filter, map, of, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, type ApprovalAnswer, type Approver, type PipelineOptions, type PreDecision, type PrePolicy, type ToolCall, type ToolResult } from '../../src/index.js';

// Issue 26's acceptance, the safety path: policies, approvals and their deadlines marble-tested, each
// on its own TestScheduler, with exact frames and no real time. Bodies are synchronous.

const input = z.object({ text: z.string() });
const write = defineTool({ name: 'write', description: 'write', input, mode: 'parallel', execute: ({ text }) => `wrote ${text}` });
const read = defineTool({ name: 'read', description: 'read', input, mode: 'parallel', execute: ({ text }) => `read ${text}` });
const calls = { a: { id: 'a', name: 'write', args: { text: 'a' } }, b: { id: 'b', name: 'read', args: { text: 'b' } } } satisfies Record<string, ToolCall>;

/** Each result as `id:status[:code]`. */
const status = (r: ToolResult) => [r.id, r.status, r.error?.code].filter((part) => part !== undefined).join(':');
const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

function results(scheduler: TestScheduler, options: Omit<PipelineOptions, 'tools' | 'scheduler'>, source: Observable<ToolCall>, kept: ToolResult[] = []) {
  const pipeline = createPipeline({ tools: [write, read], scheduler, ...options });
  return source.pipe(pipeline.operator(), map((result) => (kept.push(result), status(result))));
}

describe('acceptance: the safety path in virtual time', () => {
  // On 48ca537 this gave `denied policy_error: … "askTools(write)" did not decide within 30000 ms` at frame 30000.
  it('askTools with an approver answering at once: every call answered at its own frame', () => {
    const approvers: Approver[] = [() => 'allowed-once', () => of<ApprovalAnswer>('allowed-once')];
    for (const approve of approvers) {
      const scheduler = testScheduler();
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(results(scheduler, { pre: [askTools(['write'])], approve }, cold('a-b|', calls))).toBe('a-b|', { a: 'a:ok', b: 'b:ok' });
      });
    }
  });

  it('an approver answering after 30 frames: the result at frame 30, the approval events at 0 and 30', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const approve = () => timer(30).pipe(map((): ApprovalAnswer => 'allowed-once'));
      expectObservable(results(scheduler, { pre: [askTools(['write'])], approve }, cold('a|', calls))).toBe('30ms (a|)', { a: 'a:ok' });
      const events = createPipeline({ tools: [write, read], pre: [askTools(['write'])], approve, scheduler })
        .events(cold('a|', calls))
        .pipe(
          filter((e) => e.type === 'approval-requested' || e.type === 'approval-answered'),
          map((e) => e.type),
        );
      expectObservable(events).toBe('r 29ms (q|)', { r: 'approval-requested', q: 'approval-answered' });
    });
  });

  it('an approval timeout: denied approval_timeout at 50, the approver unsubscribed then', () => {
    const kept: ToolResult[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const answer$ = cold<ApprovalAnswer>('-');
      const options = { pre: [askTools(['write'])], approve: () => answer$, approvalTimeoutMs: 50 };
      expectObservable(results(scheduler, options, cold('a|', calls), kept)).toBe('50ms (a|)', { a: 'a:denied:approval_timeout' });
      expectSubscriptions(answer$.subscriptions).toBe('^ 49ms !');
    });
    expect(kept[0]?.content).toBe('Denied: calling "write" needs approval, and no answer came within 50 ms.');
  });

  it('a policy deadline: denied policy_error at 40, the policy unsubscribed then', () => {
    const kept: ToolResult[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const decision$ = cold<PreDecision>('-');
      const undecided: PrePolicy = Object.defineProperty(() => decision$, 'name', { value: 'undecided' });
      expectObservable(results(scheduler, { pre: [undecided], policyTimeoutMs: 40 }, cold('a|', calls), kept)).toBe('40ms (a|)', { a: 'a:denied:policy_error' });
      expectSubscriptions(decision$.subscriptions).toBe('^ 39ms !');
    });
    expect(kept[0]?.content).toBe('Denied: pre-execute policy "undecided" did not decide within 40 ms (policies fail closed).');
  });
});
