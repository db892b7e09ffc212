import { map, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { sleeperCall, sleeperInput, type SleeperArgs, statuses, VirtualSleepers } from './virtualSleepers.js';
import { ConfigError, createLimiter, createPipeline, defineTool, type Limiter } from '../../src/index.js';

// Bodies are virtual-time Observables `frames` long; `sleepers.starts` records when each began.
const sleepers = new VirtualSleepers();
const sleeper = (name: string, mode: 'parallel' | 'exclusive', limit?: Limiter | { max: number; key?: (args: SleeperArgs) => string }, timeoutMs?: number) =>
  sleepers.tool(name, mode, { ...(limit === undefined ? {} : { limit }), ...(timeoutMs === undefined ? {} : { timeoutMs }) });
const call = sleeperCall;

describe('limit (virtual time)', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    sleepers.reset(() => scheduler.now());
  });

  it('runs at most max bodies of the tool; a waiting call does not hold up the parallel calls behind it', () => {
    const lim = sleeper('lim', 'parallel', { max: 1 });
    const par = sleeper('par', 'parallel');
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: call('a', 'lim', 3), b: call('b', 'lim', 2), c: call('c', 'par', 1) });
      // a 0–3; b waits for a's permit (holding no slot: concurrency is 2) and runs 3–5; c runs 0–1
      expectObservable(calls.pipe(statuses({ tools: [lim, par], concurrency: 2 }))).toBe('---a-(bc|)', { a: 'a:ok', b: 'b:ok', c: 'c:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['c', 0], ['b', 3]]);
  });

  it('limits per key: calls of different keys do not wait for each other', () => {
    const clone = sleeper('clone', 'parallel', { max: 1, key: ({ host }) => host });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abc|)', { a: call('a', 'clone', 2, 'x'), b: call('b', 'clone', 4, 'x'), c: call('c', 'clone', 2, 'y') });
      expectObservable(calls.pipe(statuses({ tools: [clone] }))).toBe('--a---(bc|)', { a: 'a:ok', b: 'b:ok', c: 'c:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['c', 0], ['b', 2]]);
  });

  it('an exclusive call waits for an earlier call parked on its limit, and nothing passes the exclusive call', () => {
    const lim = sleeper('lim', 'parallel', { max: 1 });
    const ex = sleeper('ex', 'exclusive');
    const par = sleeper('par', 'parallel');
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(abxc|)', { a: call('a', 'lim', 2), b: call('b', 'lim', 2), x: call('x', 'ex', 1), c: call('c', 'par', 1) });
      // a 0–2, b 2–4 (parked meanwhile), x 4–5 alone, c 5–6
      expectObservable(calls.pipe(statuses({ tools: [lim, ex, par] }))).toBe('--a-bx(c|)', { a: 'a:ok', b: 'b:ok', x: 'x:ok', c: 'c:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['b', 2], ['x', 4], ['c', 5]]);
  });

  it('a shared Limiter caps several tools and pipelines together, across turns', () => {
    const browsers = createLimiter({ max: 2 });
    const shot = sleeper('shot', 'parallel', browsers);
    const scrape = sleeper('scrape', 'parallel', browsers);
    scheduler.run(({ cold, expectObservable }) => {
      const one = cold('(ab|)', { a: { ...call('a', 'shot', 4), turn: 't1' }, b: { ...call('b', 'scrape', 4), turn: 't2' } });
      const two = cold('-(cd|)', { c: call('c', 'shot', 1), d: call('d', 'scrape', 1) });
      expectObservable(one.pipe(statuses({ tools: [shot, scrape] }))).toBe('----(ab|)', { a: 'a:ok', b: 'b:ok' });
      expectObservable(two.pipe(statuses({ tools: [shot, scrape] }))).toBe('-----(cd|)', { c: 'c:ok', d: 'd:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['b', 0], ['c', 4], ['d', 4]]);
    expect(browsers.active()).toBe(0);
  });

  it('waiting for a limit is queue time, never the body timeout', () => {
    const lim = sleeper('lim', 'parallel', { max: 1 }, 3);
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(ab|)', { a: call('a', 'lim', 2), b: call('b', 'lim', 2) });
      // b waits 2 frames, then runs 2 of its 3: no timeout
      expectObservable(calls.pipe(statuses({ tools: [lim] }))).toBe('--a-(b|)', { a: 'a:ok', b: 'b:ok' });
    });
  });

  it('cancelling a waiting call answers it cancelled, never runs it, and frees nothing it did not hold', () => {
    const browsers = createLimiter({ max: 1 });
    const lim = sleeper('lim', 'parallel', browsers);
    const fails = defineTool({ name: 'fails', description: 'fails', input: sleeperInput, mode: 'parallel', onError: 'cancel-rest', execute: () => timer(1).pipe(map(() => { throw new Error('no'); })) });
    const pipeline = createPipeline({ tools: [lim, fails] });
    scheduler.run(({ cold, expectObservable }) => {
      // a holds the only permit 0–4 (its own subscription); b parks on it; f fails at 1 and cancels b
      const one = cold('(a|)', { a: call('a', 'lim', 4) });
      const two = cold('(bf|)', { b: call('b', 'lim', 1), f: call('f', 'fails', 0) });
      expectObservable(one.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}`))).toBe('----(a|)', { a: 'a:ok' });
      expectObservable(two.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}:${r.started}`))).toBe('-(bf|)', { b: 'b:cancelled:false', f: 'f:error:true' });
    });
    expect(sleepers.starts).toEqual([['a', 0]]);
    expect(browsers.active()).toBe(0);
    expect(browsers.waiting()).toBe(0);
  });

  it('a limit key that throws fails the call without running it', () => {
    const lim = sleeper('lim', 'parallel', { max: 1, key: () => { throw new Error('bad key'); } });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(a|)', { a: call('a', 'lim', 2) });
      expectObservable(calls.pipe(statuses({ tools: [lim] }))).toBe('(a|)', { a: 'a:error' });
    });
    expect(sleepers.starts).toEqual([]);
  });

  it('validates limits eagerly', () => {
    expect(() => createLimiter({ max: 0 })).toThrow(ConfigError);
    expect(() => sleeper('x', 'parallel', { max: 1.5 })).toThrow(/limit\.max/);
    expect(() => sleeper('x', 'parallel', { max: 1, key: 'host' as never })).toThrow(/limit\.key/);
    expect(() => sleeper('x', 'parallel', 2 as never)).toThrow(/`limit` must be a Limiter/);
  });
});
