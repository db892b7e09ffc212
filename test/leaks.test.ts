import { setTimeout as sleep } from 'node:timers/promises';
import { interval, map, Observable, Subject, take } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, type Approver, type PostPolicy, type ToolCall } from '../src/index.js';
import { stretched } from './support/timing.js';

/** Live timers of this process (setTimeout/setInterval handles). */
const liveTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

let liveBodyStreams = 0;
const input = z.object({ ms: z.number(), fail: z.boolean() });
const tools = [
  defineTool({
    name: 'wait',
    description: 'wait',
    input,
    mode: 'parallel',
    timeoutMs: 40,
    execute: async ({ ms, fail }, { signal }) => {
      await sleep(ms, undefined, { signal });
      if (fail) throw new Error('failed');
      return ms;
    },
  }),
  defineTool({
    name: 'stream',
    description: 'stream',
    input,
    mode: 'parallel',
    execute: ({ ms }) =>
      new Observable<number>((subscriber) => {
        liveBodyStreams++;
        const inner = interval(Math.max(1, ms)).pipe(take(3), map((i) => i)).subscribe(subscriber);
        return () => {
          liveBodyStreams--;
          inner.unsubscribe();
        };
      }),
  }),
  defineTool({ name: 'write', description: 'write', input, execute: async ({ ms }, { signal }) => sleep(ms, 'written', { signal }) }),
];
const approve: Approver = async (_request, signal) => sleep(3, 'allowed-once' as const, { signal });
const audit: PostPolicy = async function audit(_ctx, next) {
  await sleep(1);
  return next();
};

describe('no leaks', () => {
  it('after many subscriptions that complete, error, abort or unsubscribe mid-flight, no timer, listener or subscription is left', async () => {
    const before = liveTimers();
    const pipeline = createPipeline({
      tools,
      pre: [askTools(['write'])],
      approve,
      approvalTimeoutMs: 50,
      post: [audit],
      concurrency: 3,
      onError: 'continue',
      abortGraceMs: 20,
    });
    let sourceSubscriptions = 0;
    let added = 0;
    let removed = 0;

    for (let round = 0; round < 40; round++) {
      const mode = round % 4; // 0 complete, 1 source error, 2 unsubscribe mid-flight, 3 run signal aborts
      const controller = new AbortController();
      const { signal } = controller;
      const add = signal.addEventListener.bind(signal);
      const remove = signal.removeEventListener.bind(signal);
      signal.addEventListener = ((...args: Parameters<typeof add>) => (added++, add(...args))) as typeof add;
      signal.removeEventListener = ((...args: Parameters<typeof remove>) => (removed++, remove(...args))) as typeof remove;

      const calls = new Subject<ToolCall>();
      const source = new Observable<ToolCall>((subscriber) => {
        sourceSubscriptions++;
        const subscription = calls.subscribe(subscriber);
        return () => {
          sourceSubscriptions--;
          subscription.unsubscribe();
        };
      });
      const done = new Promise<void>((resolve) => {
        const subscription = source.pipe(pipeline.operator({ signal })).subscribe({ error: () => resolve(), complete: () => resolve() });
        if (mode === 2) setTimeout(() => (subscription.unsubscribe(), resolve()), 8);
      });
      for (let i = 0; i < 6; i++) {
        const name = ['wait', 'stream', 'write'][i % 3]!;
        calls.next({ id: `c${i}`, name, args: { ms: 2 + ((i * 7) % 60), fail: i === 4 } });
      }
      if (mode === 1) setTimeout(() => calls.error(new Error('stream cut')), 5);
      else if (mode === 3) setTimeout(() => controller.abort(), 5);
      else setTimeout(() => calls.complete(), 5);
      await done;
      if (mode === 3) calls.complete(); // the aborted run stopped listening; nothing may still hold the subject
    }

    // Abandoned bodies and grace periods run out within about 120 ms on an idle machine; a leak never does.
    const settled = () => sourceSubscriptions === 0 && liveBodyStreams === 0 && removed === added && liveTimers() <= before;
    const deadline = performance.now() + stretched(1000);
    while (!settled() && performance.now() < deadline) await sleep(20);
    expect(sourceSubscriptions).toBe(0);
    expect(liveBodyStreams).toBe(0);
    expect(added).toBeGreaterThan(0);
    expect(removed).toBe(added); // every abort listener on the run signals was removed
    expect(liveTimers()).toBeLessThanOrEqual(before);
  });
});
