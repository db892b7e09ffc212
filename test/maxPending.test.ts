import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { filter, from, lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, SourceError, type PostPolicy, type ToolCall } from '../src/index.js';
import { deferred } from './support/deferred.js';
import { stretched } from './support/timing.js';

/** A parallel tool `t` that sleeps `args.ms` (or waits as `wait` says); `onStart` sees each body start. */
const sleeper = (onStart: (ms: number) => void = () => undefined, onEnd: (ms: number) => void = () => undefined, wait: (ms: number) => Promise<unknown> = sleep) =>
  defineTool({
    name: 't',
    description: 't',
    input: z.object({ ms: z.number() }),
    mode: 'parallel',
    execute: async ({ ms }) => {
      onStart(ms);
      await wait(ms);
      onEnd(ms);
      return ms;
    },
  });

/**
 * One slow call first, then `fast` quick ones; counts how many bodies started while the slow one ran.
 * The slow one runs 80 ms — or, `untilAllRan`, until every quick one ended (whatever the machine's speed:
 * on a busy one, 50 quick bodies may take longer than 80 ms).
 */
async function straggler(maxPending: number, fast = 50, untilAllRan = false) {
  let slowRunning = false;
  let startedBehind = 0;
  let ended = 0;
  const allRan = deferred();
  const tool = sleeper(
    (ms) => {
      if (ms > 10) slowRunning = true;
      else if (slowRunning) startedBehind++;
    },
    (ms) => {
      if (ms > 10) slowRunning = false;
      else if (++ended === fast) allRan.resolve();
    },
    (ms) => (ms > 10 && untilAllRan ? Promise.race([allRan.promise, sleep(stretched(5000))]) : sleep(ms)), // a pool that held them back fails, not hangs
  );
  const calls: ToolCall[] = [{ id: 'slow', name: 't', args: { ms: 80 } }];
  for (let i = 0; i < fast; i++) calls.push({ id: `f${i}`, name: 't', args: { ms: 1 } });
  const results = await createPipeline({ tools: [tool], concurrency: 10, maxPending }).run(calls);
  return { results, startedBehind };
}

describe('maxPending', () => {
  it('stops starting new calls while that many results wait behind an unfinished earlier one', async () => {
    const { results, startedBehind } = await straggler(5);
    // 9 slots besides the straggler: at most 5 results may wait, plus what was already running
    expect(startedBehind).toBeLessThanOrEqual(5 + 9);
    expect(results.map((r) => r.id)).toEqual(['slow', ...Array.from({ length: 50 }, (_, i) => `f${i}`)]);
    expect(results.every((r) => r.status === 'ok')).toBe(true);
  });

  it('with Infinity the pool keeps busy behind the straggler', async () => {
    const { startedBehind } = await straggler(Infinity, 50, true);
    expect(startedBehind).toBe(50);
  });

  it('never deadlocks: with maxPending 1 every call still gets its result', async () => {
    const { results } = await straggler(1, 30);
    expect(results).toHaveLength(31);
  });

  it("holds while the straggler's result is slow after the pool (a post policy): the calls behind it wait", async () => {
    // Bodies answer at once; only call 0's post chain takes time. Counting a result as out the moment it
    // left the pool, all 200 bodies ran behind it; its result counts until the reorder gives it out.
    let startedBefore = 0; // bodies started before c0's post chain ended, c0's own among them
    let slowDone = false;
    const quick = defineTool({
      name: 'q',
      description: 'q',
      input: z.object({}),
      mode: 'parallel',
      execute: () => {
        if (!slowDone) startedBefore++;
        return 'ok';
      },
    });
    const slowFirst: PostPolicy = (ctx) => (ctx.index === 0 ? sleep(50).then(() => void (slowDone = true)) : undefined);
    const calls: ToolCall[] = Array.from({ length: 200 }, (_, i) => ({ id: `c${i}`, name: 'q', args: {} }));
    const pipeline = createPipeline({ tools: [quick], concurrency: 4, maxPending: 5, post: [slowFirst] });
    const results = await lastValueFrom(from(calls).pipe(pipeline.operator(), toArray()));
    expect(results.map((r) => r.index)).toEqual(calls.map((_, i) => i));
    // c0 and, ahead of its result, at most maxPending + concurrency - 1 = 8 calls (see ReorderWindow).
    expect(startedBefore).toBeLessThanOrEqual(1 + 5 + 4 - 1);
  });

  it('is validated', () => {
    expect(() => createPipeline({ tools: [], maxPending: 0 })).toThrow(/`maxPending` must be a positive integer or Infinity/);
  });
});

describe('run() pulls an async iterable with backpressure', () => {
  it('takes in at most maxPending + concurrency unanswered calls, however fast the source is', async () => {
    let pulled = 0;
    let answered = 0;
    let maxUnanswered = 0;
    const tool = sleeper();
    async function* fast() {
      yield { id: 'slow', name: 't', args: { ms: 60 } };
      for (let i = 0; i < 2000; i++) {
        maxUnanswered = Math.max(maxUnanswered, pulled - answered);
        pulled++;
        yield { id: `f${i}`, name: 't', args: { ms: 0 } };
      }
    }
    const results = await createPipeline({ tools: [tool], concurrency: 4, maxPending: 20, observers: [() => answered++] }).run(fast());
    expect(results).toHaveLength(2001);
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: 2001 }, (_, i) => i));
    expect(maxUnanswered).toBeLessThanOrEqual(20 + 4 + 1);
  });

  it('stops pulling (and returns the iterator) when the run signal aborts', async () => {
    let returned = false;
    const tool = defineTool({ name: 't', description: 't', input: z.object({}), mode: 'parallel', execute: () => sleep(5, 'ok') });
    async function* endless() {
      try {
        for (let i = 0; ; i++) yield { id: `c${i}`, name: 't', args: {} };
      } finally {
        returned = true;
      }
    }
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const results = await createPipeline({ tools: [tool], concurrency: 2, maxPending: 5 }).run(endless(), { signal: controller.signal });
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThan(200);
    await sleep(5);
    expect(returned).toBe(true);
  });
});

describe('run() and events() pull an array or a generator with backpressure', () => {
  it('run(generator) takes in at most maxPending + concurrency unanswered calls', async () => {
    let pulled = 0;
    let answered = 0;
    let maxUnanswered = 0;
    function* calls() {
      yield { id: 'slow', name: 't', args: { ms: 40 } };
      for (let i = 0; i < 2000; i++) {
        maxUnanswered = Math.max(maxUnanswered, pulled - answered);
        pulled++;
        yield { id: `f${i}`, name: 't', args: { ms: 0 } };
      }
    }
    const results = await createPipeline({ tools: [sleeper()], concurrency: 4, maxPending: 20, observers: [() => answered++] }).run(calls());
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: 2001 }, (_, i) => i));
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    expect(maxUnanswered).toBeLessThanOrEqual(20 + 4 + 1);
  });

  it('events(array) has at most maxPending + concurrency calls received and not yet answered', async () => {
    const calls: ToolCall[] = [{ id: 'slow', name: 't', args: { ms: 40 } }];
    for (let i = 0; i < 2000; i++) calls.push({ id: `f${i}`, name: 't', args: { ms: 0 } });
    let open = 0;
    let maxOpen = 0;
    let results = 0;
    await new Promise<void>((resolve, reject) =>
      createPipeline({ tools: [sleeper()], concurrency: 4, maxPending: 20 })
        .events(calls)
        .subscribe({
          next: (event) => {
            if (event.type === 'received') maxOpen = Math.max(maxOpen, ++open);
            if (event.type === 'result') (open--, results++);
          },
          error: reject,
          complete: resolve,
        }),
    );
    expect(results).toBe(2001);
    expect(maxOpen).toBeLessThanOrEqual(20 + 4);
  });

  it('pushes the array at once when a tool starts only after the response: those calls wait for its end', async () => {
    const later = defineTool({ name: 'later', description: 'l', input: z.object({}), mode: 'parallel', start: 'after-response', execute: () => 'ok' });
    const calls: ToolCall[] = Array.from({ length: 60 }, (_, i) => ({ id: `c${i}`, name: 'later', args: {} }));
    // 60 waiting calls, more than maxPending + concurrency: pulled, the source would never end.
    const results = await createPipeline({ tools: [later], concurrency: 2, maxPending: 5 }).run(calls);
    expect(results.map((r) => r.status)).toEqual(calls.map(() => 'ok'));
  });

  it('reads an async iterable without holding it back when a tool starts only after the response', async () => {
    const later = defineTool({ name: 'later', description: 'l', input: z.object({}), mode: 'parallel', start: 'after-response', execute: () => 'ok' });
    const eager = defineTool({ name: 'eager', description: 'e', input: z.object({}), mode: 'parallel', execute: () => 'ok' });
    async function* stream(): AsyncGenerator<ToolCall> {
      // One waiting call first, then more calls than maxPending + concurrency: pulled with backpressure,
      // the eager ones' results would wait behind it in order, the puller would wait for them, and the
      // source — whose end the first call waits for — would never end.
      yield { id: 'w', name: 'later', args: {} };
      for (let i = 0; i < 40; i++) {
        await Promise.resolve();
        yield { id: `c${i}`, name: i % 2 === 0 ? 'eager' : 'later', args: {} };
      }
    }
    const pipeline = createPipeline({ tools: [later, eager], concurrency: 2, maxPending: 5 });
    const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 2000).unref());
    const results = await Promise.race([pipeline.run(stream()), hung]);
    expect(results === 'hung' ? results : results.map((r) => r.status)).toEqual(Array.from({ length: 41 }, () => 'ok'));
    const events = await Promise.race([lastValueFrom(pipeline.events(stream()).pipe(filter((e) => e.type === 'result'), toArray())), hung]);
    expect(events === 'hung' ? events : events.length).toBe(41);
  });

  it('a generator that throws midway: the calls taken in get their results, then run() rejects with them', async () => {
    function* calls() {
      for (let i = 0; i < 50; i++) yield { id: `c${i}`, name: 't', args: { ms: 0 } };
      throw new Error('the source broke');
    }
    const failure = await createPipeline({ tools: [sleeper()], concurrency: 4, maxPending: 5 }).run(calls()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SourceError);
    expect((failure as SourceError).results.map((r) => r.status)).toEqual(Array.from({ length: 50 }, () => 'ok'));
    expect(String((failure as SourceError).cause)).toMatch(/the source broke/);
  });

  it('stops pulling a generator (its finally runs) when the run signal aborts', async () => {
    let returned = false;
    let pulled = 0;
    function* endless() {
      try {
        for (let i = 0; ; i++) {
          pulled++;
          yield { id: `c${i}`, name: 't', args: { ms: 2 } };
        }
      } finally {
        returned = true;
      }
    }
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const results = await createPipeline({ tools: [sleeper()], concurrency: 2, maxPending: 5 }).run(endless(), { signal: controller.signal });
    expect(results.length).toBeGreaterThan(0);
    expect(pulled).toBeLessThan(results.length + 2 + 5 + 2);
    expect(returned).toBe(true);
  });
});
