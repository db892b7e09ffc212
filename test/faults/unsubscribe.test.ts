import { asyncScheduler, from, Subject, take, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type Approver, type PipelineOptions, type PostPolicy, type PrePolicy, type ToolCall } from '../../src/index.js';
import { never, record, sleep, spyAbortListeners } from './helpers.js';

const started: string[] = [];
const bodySignals = new Map<string, AbortSignal>();
beforeEach(() => {
  started.length = 0;
  bodySignals.clear();
});
const tool = (name: string, mode: 'parallel' | 'exclusive') =>
  defineTool({
    name,
    description: name,
    input: z.object({ tag: z.string(), ms: z.number().default(100), sync: z.boolean().default(false) }),
    mode,
    timeoutMs: 1000, // a timer per running body, which teardown must clear
    execute: async ({ tag, ms }, ctx) => {
      started.push(tag);
      bodySignals.set(tag, ctx.signal);
      await sleep(ms, ctx.signal);
      return tag;
    },
  });
const syncTool = defineTool({ name: 's', description: 's', input: z.object({ tag: z.string() }), mode: 'parallel', execute: ({ tag }) => (started.push(tag), tag) });
const tools = [tool('p', 'parallel'), tool('x', 'exclusive'), syncTool];
const p = (tag: string, ms = 100): ToolCall => ({ id: tag, name: 'p', args: { tag, ms } });
const x = (tag: string, ms = 100): ToolCall => ({ id: tag, name: 'x', args: { tag, ms } });

/** asyncScheduler, counting the timers that are scheduled and neither ran nor were cancelled. */
function countingScheduler(): SchedulerLike & { readonly active: () => number } {
  let active = 0;
  return {
    now: () => asyncScheduler.now(),
    active: () => active,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T) {
      let live = true;
      const end = () => {
        if (live) (live = false), active--;
      };
      active++;
      const subscription = asyncScheduler.schedule(function (this: SchedulerAction<T>, s?: T) {
        end();
        work.call(this, s);
      }, delay, state);
      subscription.add(end);
      return subscription;
    },
  };
}

/**
 * Feeds `calls` into the pipeline with a run signal, waits `before` ms, unsubscribes, waits long enough
 * for anything pending to have happened, and returns what it saw.
 */
async function unsubscribeMidway(calls: readonly ToolCall[], options: Omit<PipelineOptions, 'tools' | 'scheduler'>, before = 5) {
  const controller = new AbortController();
  const listeners = spyAbortListeners(controller.signal);
  const scheduler = countingScheduler();
  const source = new Subject<ToolCall>();
  const recording = record(source.pipe(createPipeline({ tools, scheduler, ...options }).operator({ signal: controller.signal })));
  for (const call of calls) source.next(call);
  await sleep(before);
  const seenBefore = [...recording.events];
  const startedBefore = [...started];
  const listenersBefore = listeners.added.length;
  recording.unsubscribe();
  await sleep(60);
  return { recording, seenBefore, startedBefore, listeners, listenersBefore, timersLeft: scheduler.active(), source };
}

/** What every case must show: nothing emitted or started after unsubscribe, no listener or timer left. */
function expectCleanStop(outcome: Awaited<ReturnType<typeof unsubscribeMidway>>, running: readonly string[]) {
  const { recording, seenBefore, startedBefore, listeners, listenersBefore, timersLeft } = outcome;
  expect(recording.events).toEqual(seenBefore);
  expect(started).toEqual(startedBefore);
  expect(listenersBefore).toBeGreaterThan(0);
  expect(listeners.live).toEqual([]);
  expect(listeners.removed).toHaveLength(listeners.added.length);
  expect(timersLeft, 'live timers').toBe(0);
  for (const tag of running) expect(bodySignals.get(tag)!.aborted, `${tag}'s signal`).toBe(true);
  expect(() => outcome.source.next(p('late', 1))).not.toThrow();
}

describe('unsubscribing stops everything and leaves nothing behind', () => {
  it.each([
    ['behind the concurrency limit', [p('a'), p('b'), p('c')], { concurrency: 1 }],
    ['behind an exclusive barrier', [x('a'), p('b'), p('c')], {}],
  ])('(a) while calls are queued %s', async (_label, calls, options) => {
    const outcome = await unsubscribeMidway(calls, options);
    expect(outcome.startedBefore).toEqual(['a']);
    expect(outcome.seenBefore).toEqual([]);
    expectCleanStop(outcome, ['a']);
  });

  it('(b) while calls await approval: the approver’s signals abort, a late approval starts nothing', async () => {
    const approverSignals: AbortSignal[] = [];
    // Each approval comes late by construction: only once its signal has aborted (the unsubscribe). A
    // timed one (20 ms) could come before the unsubscribe on a loaded machine, where the test's 5 ms
    // wait took longer, and then 'a' started (CI, load 9).
    const approve: Approver = async (_request, signal) => {
      approverSignals.push(signal);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return 'allowed-once';
    };
    const outcome = await unsubscribeMidway([p('a'), p('b'), x('c')], { defaultDecision: 'ask', approve, approvalTimeoutMs: 1000 });
    expect(outcome.startedBefore).toEqual([]);
    expect(approverSignals).toHaveLength(3);
    expect(approverSignals.every((signal) => signal.aborted)).toBe(true);
    expectCleanStop(outcome, []);
  });

  it('(c) while calls run: every running body’s signal aborts; the queued ones never start', async () => {
    const outcome = await unsubscribeMidway([p('a'), p('b'), x('c'), p('d')], {});
    expect(outcome.startedBefore).toEqual(['a', 'b']);
    expect((bodySignals.get('a')!.reason as DOMException).name).toBe('AbortError');
    expectCleanStop(outcome, ['a', 'b']);
  });

  it('(d) while a slow async post-execute policy runs: its signal aborts; nothing is emitted, nothing starts', async () => {
    const postSignals: AbortSignal[] = [];
    const slowPost: PostPolicy = async (ctx) => (postSignals.push(ctx.signal), await sleep(40, ctx.signal), undefined);
    // a is done and in its post policy, exclusive b runs, c waits behind it
    const outcome = await unsubscribeMidway([p('a', 1), x('b', 100), p('c', 1)], { post: [slowPost] }, 10);
    expect(outcome.startedBefore).toEqual(['a', 'b']);
    expect(postSignals).toHaveLength(1);
    expect(postSignals[0]!.aborted).toBe(true);
    expectCleanStop(outcome, ['b']);
  });

  it('(d′) while a pre-execute policy that honours its signal is pending', async () => {
    const preSignals: AbortSignal[] = [];
    const slowPre: PrePolicy = async (ctx) => (preSignals.push(ctx.signal), await sleep(40, ctx.signal), undefined);
    const outcome = await unsubscribeMidway([p('a'), x('b')], { pre: [slowPre] });
    expect(preSignals).toHaveLength(2);
    expect(preSignals.every((signal) => signal.aborted)).toBe(true);
    expectCleanStop(outcome, []);
  });

  it.each([
    ['pre-execute', { pre: [(() => never()) as PrePolicy] }],
    ['post-execute', { post: [(() => never()) as PostPolicy] }],
  ])('(d″) while a %s policy that ignores its signal is pending: no timer is left', async (_label, options) => {
    const outcome = await unsubscribeMidway([p('a', 1), x('b', 1)], { ...options, policyTimeoutMs: 500 }, 10);
    expectCleanStop(outcome, []);
  });

  it('re-entrantly, from a result handler (take(1)), while a burst is running', async () => {
    const controller = new AbortController();
    const listeners = spyAbortListeners(controller.signal);
    const calls = Array.from({ length: 20 }, (_, i) => p(`c${i}`, i === 0 ? 1 : 100));
    const seen: string[] = [];
    await new Promise<void>((resolve) =>
      from(calls).pipe(createPipeline({ tools, concurrency: 4 }).operator({ signal: controller.signal }), take(1)).subscribe({ next: (r) => seen.push(r.id), complete: resolve }),
    );
    await sleep(40);
    expect(seen).toEqual(['c0']);
    // c0's result is out before its slot is refilled (it counts for maxPending first), so the stop comes
    // before c4 could start; nothing starts after it
    expect(started).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(['c1', 'c2', 'c3'].every((tag) => bodySignals.get(tag)!.aborted)).toBe(true);
    expect(listeners.live).toEqual([]);
  });

  it('from a result handler during a synchronous source: the source stops in the middle of its loop', async () => {
    let pulled = 0;
    function* calls(): Generator<ToolCall> {
      for (let i = 0; i < 1000; i++, pulled++) yield { id: `c${i}`, name: 's', args: { tag: `c${i}` } };
    }
    const seen: string[] = [];
    from(calls()).pipe(createPipeline({ tools }).operator(), take(1)).subscribe((r) => seen.push(r.id));
    expect(seen).toEqual(['c0']);
    expect(pulled).toBe(0); // the generator was never resumed past the first call
    expect(started).toEqual(['c0']);
  });
});
