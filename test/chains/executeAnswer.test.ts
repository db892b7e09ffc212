import { isObservable, map, tap, toArray, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ExecuteMiddleware, type ToolCall } from '../../src/index.js';
import { deferred } from '../support/deferred.js';

// What `next()` gives an execute middleware, in real time: an Observable of the body's items as they
// come (whatever the body streams with), still awaitable as before, and never a second run.
const input = z.object({});
const call: ToolCall = { id: 'a', name: 'stream', args: {} };

describe('next() in execute, as an Observable', () => {
  it('an async iterable body\'s items come live: a body waiting on what the middleware saw of it goes on', async () => {
    const sawFirst = deferred();
    const tool = defineTool({
      name: 'stream',
      description: 'stream',
      input,
      mode: 'parallel',
      timeoutMs: 2_000,
      execute: async function* () {
        yield 1;
        await sawFirst.promise; // resolved only by a middleware that saw item 1 before the body ended
        yield 2;
      },
    });
    const live: ExecuteMiddleware = (_ctx, next) => next().pipe(tap((x) => x === 1 && sawFirst.resolve()));
    const [result] = await createPipeline({ tools: [tool], execute: [live] }).run([call]);
    expect(result).toMatchObject({ status: 'ok', value: [1, 2], streamed: true });
  });

  it('awaiting and subscribing share one run; awaited, a stream is its items collected', async () => {
    let runs = 0;
    const tool = defineTool({ name: 'stream', description: 'stream', input, mode: 'parallel', execute: async function* () { runs++; yield 'x'; yield 'y'; } });
    let awaited: unknown;
    let subscribed: unknown;
    const both: ExecuteMiddleware = async (_ctx, next) => {
      const answer = next();
      expect(isObservable(answer)).toBe(true);
      expect(answer instanceof Promise).toBe(false);
      const items = new Promise((resolve) => (answer as Observable<unknown>).pipe(toArray()).subscribe(resolve));
      awaited = await answer;
      subscribed = await items;
      return awaited;
    };
    const [result] = await createPipeline({ tools: [tool], execute: [both] }).run([call]);
    expect(runs).toBe(1);
    expect(awaited).toMatchObject({ kind: 'streamed', items: ['x', 'y'] });
    expect(subscribed).toEqual(['x', 'y']);
    expect(result).toMatchObject({ status: 'ok', value: ['x', 'y'], streamed: true });
  });

  it('emits only the items the budget keeps, live and replayed alike; the omitted count is the body\'s', async () => {
    const tool = defineTool({ name: 'stream', description: 'stream', input, mode: 'parallel', execute: async function* () { yield* [1, 2, 3, 4, 5]; } });
    const seen: unknown[] = [];
    const piped: ExecuteMiddleware = (_ctx, next) => next().pipe(map((x) => (seen.push(x), x)));
    const pipeline = createPipeline({ tools: [tool], execute: [piped], retention: { default: { maxItems: 2 } } });
    const [result] = await pipeline.run([call]);
    expect(seen).toEqual([1, 2]);
    expect(result).toMatchObject({ status: 'ok', value: [1, 2], streamed: true, omitted: { items: 3 } });
  });
});
