import { map, of, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, resetRateLimits } from '../../src/index.js';

// One module-level tool with an inline rate limit, as a user's test file would hold it: one start per
// 100 ms. Its body answers at once, so a result's frame is its start's.
const starts: [string, number][] = [];
let clock: SchedulerLike | undefined;
const search = defineTool({
  name: 'search',
  description: 'Search',
  input: z.object({ q: z.string() }),
  mode: 'parallel',
  rateLimit: { max: 1, perMs: 100 },
  execute: ({ q }) => {
    starts.push([q, clock?.now() ?? -1]);
    return q;
  },
});
const call = (q: string) => ({ id: q, name: 'search', args: { q } });

/**
 * One marble test of its own: a fresh TestScheduler and pipeline, two calls at frame 0. `ownScheduler`:
 * the pipeline is given the TestScheduler; else it keeps the default `asyncScheduler` (virtual inside `run`).
 */
function marbleTest(ownScheduler = true): void {
  starts.length = 0;
  const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  clock = scheduler;
  scheduler.run(({ cold, expectObservable }) => {
    const pipeline = createPipeline({ tools: [search], ...(ownScheduler ? { scheduler } : {}) });
    const calls = cold('(ab|)', { a: call('a'), b: call('b') });
    // a starts at 0 with the only token; b waits for it to come back, at 100
    expectObservable(calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}`))).toBe('a 99ms (b|)', { a: 'a:ok', b: 'b:ok' });
  });
  expect(starts).toEqual([['a', 0], ['b', 100]]);
}

describe('an inline rateLimit keeps one bucket per scheduler', () => {
  it('two pipelines over one module-level tool, each on its own TestScheduler, do not affect each other', () => {
    marbleTest();
    // Before, the second found the first's tokens spent on another clock, and started at 200 and 300.
    marbleTest();
  });

  it('real-time pipelines (the default scheduler) still share one quota', async () => {
    clock = undefined;
    const one = createPipeline({ tools: [search] });
    const two = createPipeline({ tools: [search] });
    const quota = search.rateLimit!.limiter;
    const [first] = await one.run([call('x')]);
    expect(first?.status).toBe('ok');
    expect(quota.available()).toBe(0);
    // The other pipeline's call waits for the token the first one spent (back in 100 ms, after this test).
    const results: string[] = [];
    const subscription = of(call('y')).pipe(two.operator()).subscribe((r) => results.push(r.status));
    await vi.waitFor(() => expect(quota.waiting()).toBe(1));
    expect(results).toEqual([]);
    subscription.unsubscribe();
    expect(quota.waiting()).toBe(0);
  });
});

describe('resetRateLimits', () => {
  it('lets marble tests that keep the default scheduler start afresh (inside run it is virtual, but one scheduler for all)', () => {
    resetRateLimits();
    marbleTest(false);
    resetRateLimits();
    marbleTest(false);
  });

  it('forgets the tokens spent in real time: the next call starts with every token free', async () => {
    clock = undefined;
    const quota = search.rateLimit!.limiter;
    await createPipeline({ tools: [search] }).run([call('x')]);
    expect(quota.available()).toBe(0);
    resetRateLimits();
    expect(quota.available()).toBe(1);
    const results = await createPipeline({ tools: [search] }).run([call('y')]);
    expect(results.map((r) => r.status)).toEqual(['ok']);
    expect(quota.available()).toBe(0);
    resetRateLimits();
  });
});
