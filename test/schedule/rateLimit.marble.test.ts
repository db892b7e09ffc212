import { map, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { countedTimers } from './countedTimers.js';
import { sleeperCall, sleeperInput, type SleeperArgs, statuses, VirtualSleepers } from './virtualSleepers.js';
import {
  ConfigError,
  createLimiter,
  createPipeline,
  createRateLimiter,
  defineTool,
  type Limiter,
  type PrePolicy,
  type RateLimiter,
  type RateLimitOptions,
} from '../../src/index.js';

// Bodies are virtual-time Observables `frames` long; `sleepers.starts` records when each began.
const sleepers = new VirtualSleepers();
type Args = SleeperArgs;
interface Scheduling {
  readonly rateLimit?: RateLimiter | RateLimitOptions<Args>;
  readonly limit?: Limiter;
  readonly timeoutMs?: number;
}
const sleeper = (name: string, mode: 'parallel' | 'exclusive', scheduling: Scheduling = {}) => sleepers.tool(name, mode, scheduling);
const call = sleeperCall;

describe('rateLimit (virtual time)', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    sleepers.reset(() => scheduler.now());
  });

  it('starts at most max bodies per window; a waiting call holds no slot and does not hold up the parallel calls behind it', () => {
    const search = sleeper('search', 'parallel', { rateLimit: { max: 2, perMs: 5 } });
    const par = sleeper('par', 'parallel');
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abcdp|)', { a: call('a', 'search', 1), b: call('b', 'search', 1), c: call('c', 'search', 1), d: call('d', 'search', 1), p: call('p', 'par', 2) });
      // a, b 0–1; c, d wait for the tokens a and b spent, back at 5; p runs 0–2 (concurrency 3: c and d hold no slot)
      expectObservable(calls.pipe(statuses({ tools: [search, par], concurrency: 3 }))).toBe('-(ab)-(cdp|)', { a: 'a:ok', b: 'b:ok', c: 'c:ok', d: 'd:ok', p: 'p:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['b', 0], ['p', 0], ['c', 5], ['d', 5]]);
  });

  it('counts the window from each start: a token comes back perMs after the body that spent it started', () => {
    const search = sleeper('search', 'parallel', { rateLimit: { max: 2, perMs: 4 } });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('a-b--c', { a: call('a', 'search', 0), b: call('b', 'search', 0), c: call('c', 'search', 0) });
      // a at 0, b at 2, c arrives at 5: a's token is back (at 4), b's is not (at 6): c starts at once
      expectObservable(calls.pipe(statuses({ tools: [search] }))).toBe('a-b--c', { a: 'a:ok', b: 'b:ok', c: 'c:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['b', 2], ['c', 5]]);
  });

  it('rate-limits per key: keys have separate quotas', () => {
    const fetchPage = sleeper('fetch', 'parallel', { rateLimit: { max: 1, perMs: 10, key: ({ host }) => host } });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: call('a', 'fetch', 1, 'x'), b: call('b', 'fetch', 1, 'x'), c: call('c', 'fetch', 1, 'y') });
      expectObservable(calls.pipe(statuses({ tools: [fetchPage] }))).toBe('-a---------(bc|)', { a: 'a:ok', b: 'b:ok', c: 'c:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['c', 0], ['b', 10]]);
  });

  it('an exclusive call waits for an earlier call parked on its rate limit; an exclusive call waiting for its token lets nothing pass', () => {
    const search = sleeper('search', 'parallel', { rateLimit: { max: 1, perMs: 5 } });
    const write = sleeper('write', 'exclusive', { rateLimit: { max: 1, perMs: 5 } });
    const par = sleeper('par', 'parallel');
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abxyc|)', { a: call('a', 'search', 1), b: call('b', 'search', 1), x: call('x', 'write', 1), y: call('y', 'write', 1), c: call('c', 'par', 1) });
      // a 0–1; b parked until 5, runs 5–6; x alone 6–7; y waits for x's token (back at 11), runs 11–12; c after it
      expectObservable(calls.pipe(statuses({ tools: [search, write, par] }))).toBe('-a----bx----y(c|)', { a: 'a:ok', b: 'b:ok', x: 'x:ok', y: 'y:ok', c: 'c:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['b', 5], ['x', 6], ['y', 11], ['c', 12]]);
  });

  it('waiting for a token is queue time, never the body timeout', () => {
    const search = sleeper('search', 'parallel', { rateLimit: { max: 1, perMs: 10 }, timeoutMs: 3 });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(ab|)', { a: call('a', 'search', 2), b: call('b', 'search', 2) });
      // b waits 10 frames, then runs 2 of its 3
      expectObservable(calls.pipe(statuses({ tools: [search] }))).toBe('--a---------(b|)', { a: 'a:ok', b: 'b:ok' });
    });
  });

  it('cancelling a call waiting for its token answers it cancelled, never runs it, and leaves no timer', () => {
    const quota = createRateLimiter({ max: 1, perMs: 100 });
    const search = sleeper('search', 'parallel', { rateLimit: quota });
    const fails = defineTool({ name: 'fails', description: 'fails', input: sleeperInput, mode: 'parallel', onError: 'cancel-rest', execute: () => timer(3).pipe(map(() => { throw new Error('no'); })) });
    const timers = countedTimers();
    scheduler.run(({ cold, expectObservable }) => {
      // a spends the only token at 0; b waits for it (back at 100); f fails at 3 and cancels b
      const calls = cold('(abf|)', { a: call('a', 'search', 1), b: call('b', 'search', 1), f: call('f', 'fails', 0) });
      const pipeline = createPipeline({ tools: [search, fails], scheduler: timers, defaultTimeoutMs: Infinity });
      expectObservable(calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.started}`))).toBe('-a-(bf|)', { a: 'a:ok:true', b: 'b:cancelled:false', f: 'f:error:true' });
    });
    expect(sleepers.starts).toEqual([['a', 0]]);
    expect(quota.waiting()).toBe(0);
    expect(timers.active()).toBe(0);
  });

  it('unsubscribing while calls wait for tokens leaves no timer and no waiter', () => {
    const quota = createRateLimiter({ max: 1, perMs: 100 });
    const search = sleeper('search', 'parallel', { rateLimit: quota });
    const timers = countedTimers();
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: call('a', 'search', 1), b: call('b', 'search', 1), c: call('c', 'search', 1) });
      const pipeline = createPipeline({ tools: [search], scheduler: timers, defaultTimeoutMs: Infinity });
      expectObservable(calls.pipe(pipeline.operator(), map((r) => r.id)), '-----!').toBe('-a');
    });
    expect(sleepers.starts).toEqual([['a', 0]]);
    expect(quota.waiting()).toBe(0);
    expect(timers.active()).toBe(0);
  });

  it('with a limit: the permit comes first and the token is taken only by a call holding it', () => {
    const quota = createRateLimiter({ max: 2, perMs: 10 });
    const one = createLimiter({ max: 1 });
    const build = sleeper('build', 'parallel', { limit: one, rateLimit: quota });
    const search = sleeper('search', 'parallel', { rateLimit: quota });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: call('a', 'build', 3), b: call('b', 'build', 1), c: call('c', 'search', 1) });
      // a takes the permit and a token at 0; b waits for the permit, holding no token, so c gets the
      // second token at 0; b has the permit at 3 and the first token back at 10
      expectObservable(calls.pipe(statuses({ tools: [build, search] }))).toBe('---a-------(bc|)', { a: 'a:ok', b: 'b:ok', c: 'c:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['c', 0], ['b', 10]]);
    expect(one.active()).toBe(0);
    expect(one.waiting()).toBe(0);
  });

  it('a shared RateLimiter is one quota for several tools and pipelines', () => {
    const quota = createRateLimiter({ max: 2, perMs: 6 });
    const web = sleeper('web', 'parallel', { rateLimit: quota });
    const news = sleeper('news', 'parallel', { rateLimit: quota });
    scheduler.run(({ cold, expectObservable }) => {
      const one = cold('(ab|)', { a: call('a', 'web', 1), b: call('b', 'news', 1) });
      const two = cold('-(cd|)', { c: call('c', 'web', 1), d: call('d', 'news', 1) });
      expectObservable(one.pipe(statuses({ tools: [web, news] }))).toBe('-(ab|)', { a: 'a:ok', b: 'b:ok' });
      expectObservable(two.pipe(statuses({ tools: [web, news] }))).toBe('-------(cd|)', { c: 'c:ok', d: 'd:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['b', 0], ['c', 6], ['d', 6]]);
    expect(quota.waiting()).toBe(0);
  });

  it('a rate limit key that throws fails the call without running it, and returns its limit permit', () => {
    const one = createLimiter({ max: 1 });
    const search = sleeper('search', 'parallel', { limit: one, rateLimit: { max: 1, perMs: 10, key: ({ host }) => { if (host === 'bad') throw new Error('bad key'); return host; } } });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(ab|)', { a: call('a', 'search', 2, 'bad'), b: call('b', 'search', 2) });
      expectObservable(calls.pipe(statuses({ tools: [search] }))).toBe('a-(b|)', { a: 'a:error', b: 'b:ok' });
    });
    expect(sleepers.starts).toEqual([['b', 0]]);
    expect(one.active()).toBe(0);
  });

  it('validates rate limits eagerly', () => {
    expect(() => createRateLimiter({ max: 0, perMs: 10 })).toThrow(ConfigError);
    expect(() => createRateLimiter({ max: 1, perMs: 0 })).toThrow(/createRateLimiter: `perMs`/);
    expect(() => sleeper('x', 'parallel', { rateLimit: { max: 1.5, perMs: 10 } })).toThrow(/rateLimit\.max/);
    expect(() => sleeper('x', 'parallel', { rateLimit: { max: 1, perMs: Infinity } })).toThrow(/rateLimit\.perMs/);
    expect(() => sleeper('x', 'parallel', { rateLimit: { max: 1, perMs: 10, key: 'host' as never } })).toThrow(/rateLimit\.key/);
    expect(() => sleeper('x', 'parallel', { rateLimit: 2 as never })).toThrow(/`rateLimit` must be a RateLimiter/);
  });
});

describe('rateLimit (real time)', () => {
  it('a call denied by its start check gives its token back: the next call starts at once', async () => {
    sleepers.reset(() => 0);
    const quota = createRateLimiter({ max: 1, perMs: 60_000 });
    const search = sleeper('search', 'parallel', { rateLimit: quota });
    // Start checks are promises: they settle outside virtual time, so this runs on real timers.
    const denyA: PrePolicy = function denyA(ctx) {
      if (ctx.call.id === 'a') ctx.beforeStart(() => ({ decision: 'deny', reason: 'changed' }));
      return undefined;
    };
    const results = await createPipeline({ tools: [search], pre: [denyA] }).run([call('a', 'search', 0), call('b', 'search', 0)]);
    expect(results.map((r) => `${r.id}:${r.status}`)).toEqual(['a:denied', 'b:ok']);
    expect(sleepers.starts.map(([key]) => key)).toEqual(['b']);
    expect(quota.available()).toBe(0); // b spent the token a gave back
  });
});

describe('rateLimit with retries (virtual time)', () => {
  it('every attempt is a body start and takes a token: a retry waits for one behind earlier waiters (out of its slot, see rateLimitRetry.test.ts)', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    const attempts: [string, number][] = [];
    const failedOnce = new Set<string>();
    const flaky = defineTool({
      name: 'flaky',
      description: 'fails its first attempt',
      input: z.object({ key: z.string() }),
      mode: 'parallel',
      idempotent: true,
      rateLimit: { max: 1, perMs: 10 },
      retry: { attempts: 2, backoff: { initialMs: 1, jitter: 0 } },
      execute: ({ key }) => {
        attempts.push([key, scheduler.now()]);
        if (!failedOnce.has(key)) {
          failedOnce.add(key);
          throw new Error('first attempt fails');
        }
        return key;
      },
    });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(ab|)', { a: { id: 'a', name: 'flaky', args: { key: 'a' } }, b: { id: 'b', name: 'flaky', args: { key: 'b' } } });
      const pipeline = createPipeline({ tools: [flaky] });
      expectObservable(calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.attempts}`))).toBe('20ms a 9ms (b|)', { a: 'a:ok:2', b: 'b:ok:2' });
    });
    // One start per 10 ms window: a at 0; b (waiting since 0) at 10; a's retry (waiting since 1) at 20; b's at 30.
    expect(attempts).toEqual([['a', 0], ['b', 10], ['a', 20], ['b', 30]]);
  });
});
