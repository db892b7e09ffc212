/**
 * Issue 24, finding 1: a rate-limited tool with `retry` deadlocked its pool. Calls backing off held
 * every slot, a parked call was granted the only token without a slot to start in, and the retrying
 * calls waited in their slots for a token that never came back; nothing had a deadline. Now a parallel
 * call that must wait for its next attempt's token gives its slot back meanwhile and comes back ahead
 * of the queue, and no wait of a call that has started lasts longer than its time limit.
 */
import { map, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, createRateLimiter, defineTool, type RateLimiter, type ToolCall } from '../../src/index.js';
import { stretched } from '../support/timing.js';
import { countedTimers } from './countedTimers.js';

const input = z.object({ key: z.string(), frames: z.number().default(1), failures: z.number().default(1) });
type Args = z.output<typeof input>;

/**
 * A tool whose body takes `frames` (virtual time), failing its first `failures` attempts; `starts`
 * logs each body start with the attempt and the time.
 */
function flakyTool(options: { name?: string; mode?: 'parallel' | 'exclusive'; rateLimit: RateLimiter | { max: number; perMs: number }; timeoutMs?: number; initialMs?: number; attempts?: number; starts: string[]; now: () => number }) {
  const tries = new Map<string, number>();
  return defineTool({
    name: options.name ?? 'flaky',
    description: 'fails its first attempts',
    input,
    mode: options.mode ?? 'parallel',
    idempotent: true,
    rateLimit: options.rateLimit,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    retry: { attempts: options.attempts ?? 2, ...(options.initialMs === undefined ? {} : { backoff: { initialMs: options.initialMs } }) },
    execute: ({ key, frames, failures }: Args) => {
      const attempt = (tries.get(key) ?? 0) + 1;
      tries.set(key, attempt);
      options.starts.push(`${key}#${attempt}@${options.now()}`);
      return timer(frames).pipe(
        map(() => {
          if (attempt <= failures) throw new Error(`${key} attempt ${attempt} failed`);
          return `${key} ok`;
        }),
      );
    },
  });
}

const call = (key: string, name = 'flaky', args: Partial<Args> = {}): ToolCall => ({ id: key, name, args: { key, ...args } });

describe('rateLimit with retry: the exact reproduction of issue 24, finding 1', () => {
  it('rateLimit {max: 1, perMs: 50}, retry {attempts: 2}, concurrency 2, four calls failing their first attempt: run() resolves, every call answered', async () => {
    const tries = new Map<string, number>();
    const flaky = defineTool({
      name: 'flaky',
      description: 'fails its first attempt',
      input: z.object({ n: z.number() }),
      mode: 'parallel',
      idempotent: true,
      rateLimit: { max: 1, perMs: 50 },
      retry: { attempts: 2 },
      execute: async ({ n }) => {
        const attempt = (tries.get(`${n}`) ?? 0) + 1;
        tries.set(`${n}`, attempt);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (attempt === 1) throw new Error('transient');
        return n;
      },
    });
    const calls: ToolCall[] = [0, 1, 2, 3].map((n) => ({ id: `c${n}`, name: 'flaky', args: { n } }));
    const run = createPipeline({ tools: [flaky], concurrency: 2 }).run(calls);
    // The whole run takes about 0.7 s (backoffs of 200 ms, a token every 50 ms); a deadlock never ends.
    let bound: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<'hung'>((resolve) => (bound = setTimeout(() => resolve('hung'), stretched(10_000))));
    const results = await Promise.race([run, hung]);
    clearTimeout(bound);
    expect(results === 'hung' ? 'hung' : results.map((r) => [r.id, r.status, r.attempts])).toEqual([
      ['c0', 'ok', 2],
      ['c1', 'ok', 2],
      ['c2', 'ok', 2],
      ['c3', 'ok', 2],
    ]);
  });
});

describe('rateLimit with retry (virtual time)', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  it('a parallel call waiting for its next token gives its slot back, and comes back ahead of the queue once it has one', () => {
    const starts: string[] = [];
    const quota = createRateLimiter({ max: 1, perMs: 50 });
    const timers = countedTimers();
    const flaky = flakyTool({ rateLimit: quota, initialMs: 200, starts, now: () => scheduler.now() });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abcd|)', { a: call('a'), b: call('b'), c: call('c'), d: call('d') });
      const pipeline = createPipeline({ tools: [flaky], concurrency: 2, scheduler: timers, defaultTimeoutMs: 10_000 });
      const results = calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.attempts}`));
      // a, b fail and back off in their slots; c takes the token back at 100 but has no slot until a's
      // delay ends at 201 and a, finding no token, gives its slot back; and so on: one start per 50 ms.
      expectObservable(results).toBe(`${' '.repeat(403)}a ${' '.repeat(48)}b ${' '.repeat(48)}c ${' '.repeat(48)}(d|)`.replace(/ /g, '-'), {
        a: 'a:ok:2',
        b: 'b:ok:2',
        c: 'c:ok:2',
        d: 'd:ok:2',
      });
    });
    expect(starts).toEqual(['a#1@0', 'b#1@50', 'c#1@201', 'd#1@251', 'a#2@402', 'b#2@452', 'c#2@502', 'd#2@552']);
    expect(quota.waiting()).toBe(0);
    expect(timers.active()).toBe(0);
  });

  it('a retried call whose token does not come within its timeoutMs is answered timeout, and frees what it held', () => {
    const starts: string[] = [];
    const quota = createRateLimiter({ max: 1, perMs: 100 });
    const timers = countedTimers();
    const flaky = flakyTool({ rateLimit: quota, initialMs: 1, timeoutMs: 20, starts, now: () => scheduler.now() });
    scheduler.run(({ cold, expectObservable }) => {
      // a fails at 1 and its delay ends at 2; the token it spent returns only at 100, past 2 + 20.
      const calls = cold('a', { a: call('a') });
      const pipeline = createPipeline({ tools: [flaky], scheduler: timers });
      const results = calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.error?.code}:${r.attempts}`));
      expectObservable(results).toBe('----------------------a', { a: 'a:error:timeout:1' });
    });
    expect(starts).toEqual(['a#1@0']);
    expect(quota.waiting()).toBe(0);
    expect(timers.active()).toBe(0);
  });

  it('the same for a retried call waiting for a slot after it got its token: the deadline covers the whole wait', () => {
    const starts: string[] = [];
    const quota = createRateLimiter({ max: 1, perMs: 3 });
    const timers = countedTimers();
    const flaky = flakyTool({ rateLimit: quota, initialMs: 1, timeoutMs: 20, starts, now: () => scheduler.now() });
    const long = defineTool({ name: 'long', description: 'l', input, mode: 'parallel', execute: () => timer(50).pipe(map(() => 'done')) });
    scheduler.run(({ cold, expectObservable }) => {
      // a fails at 1; its delay ends at 2, when the token is still out (back at 3): it gives its slot
      // back and l takes it at 2 for 50 frames; a has its token at 3 but no slot until 52, past 2 + 20.
      const calls = cold('a-l', { a: call('a'), l: call('l', 'long') });
      const pipeline = createPipeline({ tools: [flaky, long], concurrency: 1, scheduler: timers });
      const results = calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.error?.code}:${r.attempts}`));
      expectObservable(results).toBe(`${'-'.repeat(22)}a${'-'.repeat(29)}l`, { a: 'a:error:timeout:1', l: 'l:ok:undefined:1' });
    });
    expect(starts).toEqual(['a#1@0']);
    expect(quota.available()).toBe(1);
    expect(timers.active()).toBe(0);
  });

  it('maxPending does not hold back a retry back from its wait for a token: it is no new start', () => {
    const starts: string[] = [];
    const quota = createRateLimiter({ max: 1, perMs: 10 });
    const timers = countedTimers();
    const flaky = flakyTool({ rateLimit: quota, initialMs: 1, timeoutMs: 20, starts, now: () => scheduler.now() });
    const plain = (name: string, frames: number) =>
      defineTool({ name, description: name, input, mode: 'parallel', execute: ({ key }: Args) => (starts.push(`${key}@${scheduler.now()}`), timer(frames).pipe(map(() => key))) });
    scheduler.run(({ cold, expectObservable }) => {
      // s runs 0–100; a fails at 1, and from 2 waits out of its slot for the token back at 10; q's
      // result waits behind s from 1, so the bound (1) is full. a's second attempt starts at 10 all the
      // same — held back until s ended, it would time out at 22.
      const calls = cold('(saq|)', { s: call('s', 'long'), a: call('a'), q: call('q', 'quick') });
      const pipeline = createPipeline({ tools: [flaky, plain('long', 100), plain('quick', 1)], concurrency: 3, maxPending: 1, scheduler: timers });
      const results = calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.attempts}`));
      expectObservable(results).toBe(`${'-'.repeat(100)}(saq|)`, { s: 's:ok:1', a: 'a:ok:2', q: 'q:ok:1' });
    });
    expect(starts).toEqual(['s@0', 'a#1@0', 'q@0', 'a#2@10']);
    expect(timers.active()).toBe(0);
  });

  it('an exclusive call waits for its next token in its slot, alone, within its deadline', () => {
    const starts: string[] = [];
    const quota = createRateLimiter({ max: 1, perMs: 10 });
    const timers = countedTimers();
    const write = flakyTool({ name: 'write', mode: 'exclusive', rateLimit: quota, initialMs: 1, timeoutMs: 20, starts, now: () => scheduler.now() });
    const read = defineTool({
      name: 'read',
      description: 'r',
      input,
      mode: 'parallel',
      execute: ({ key }) => {
        starts.push(`${key}@${scheduler.now()}`);
        return timer(1).pipe(map(() => key));
      },
    });
    scheduler.run(({ cold, expectObservable }) => {
      // w fails at 1, its delay ends at 2, its token returns at 10: it runs 10–11, and r only after it.
      const calls = cold('(wr|)', { w: call('w', 'write'), r: call('r', 'read') });
      const pipeline = createPipeline({ tools: [write, read], concurrency: 4, scheduler: timers });
      const results = calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}`));
      expectObservable(results).toBe('-----------w(r|)', { w: 'w:ok', r: 'r:ok' });
    });
    expect(starts).toEqual(['w#1@0', 'w#2@10', 'r@11']);
    expect(timers.active()).toBe(0);
  });

  it('an exclusive call whose next token does not come within its timeoutMs is answered timeout', () => {
    const starts: string[] = [];
    const quota = createRateLimiter({ max: 1, perMs: 100 });
    const timers = countedTimers();
    const write = flakyTool({ name: 'write', mode: 'exclusive', rateLimit: quota, initialMs: 1, timeoutMs: 20, starts, now: () => scheduler.now() });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(wx|)', { w: call('w', 'write'), x: call('x', 'write', { failures: 0 }) });
      const pipeline = createPipeline({ tools: [write], scheduler: timers, onError: 'continue' });
      const results = calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.error?.code}`));
      // w waits from 2 for a token back at 100: answered timeout at 22; x then waits for that token.
      expectObservable(results).toBe(`${'-'.repeat(22)}w${'-'.repeat(77)}-(x|)`, { w: 'w:error:timeout', x: 'x:ok:undefined' });
    });
    expect(starts).toEqual(['w#1@0', 'x#1@100']);
    expect(quota.waiting()).toBe(0);
    expect(timers.active()).toBe(0);
  });

  it('cancelling a call that waits for its next token out of its slot answers it cancelled and returns nothing it does not hold', () => {
    const starts: string[] = [];
    const quota = createRateLimiter({ max: 1, perMs: 100 });
    const timers = countedTimers();
    const flaky = flakyTool({ rateLimit: quota, initialMs: 1, starts, now: () => scheduler.now() });
    const fails = defineTool({ name: 'fails', description: 'f', input, mode: 'parallel', onError: 'cancel-rest', execute: () => timer(10).pipe(map(() => { throw new Error('no'); })) });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(af|)', { a: call('a'), f: call('f', 'fails') });
      const pipeline = createPipeline({ tools: [flaky, fails], scheduler: timers, defaultTimeoutMs: 1_000 });
      const results = calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.started}`));
      expectObservable(results).toBe('----------(af|)', { a: 'a:cancelled:true', f: 'f:error:true' });
    });
    expect(starts).toEqual(['a#1@0']);
    expect(quota.waiting()).toBe(0);
    expect(timers.active()).toBe(0);
  });
});
