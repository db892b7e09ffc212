import { map, of, retry, timer, type Observable, type ObservableInput } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ExecuteMiddleware, type NextAnswer, type ToolCall, type ToolResult } from '../../src/index.js';
import { Later } from '../../src/util/later.js';

// Execute middleware in virtual time: what `next()` gives follows the body frame by frame, as an
// Observable of its streamed items (or of its value), and a chain whose members answer at once stays
// synchronous. Every frame below is exact.
let scheduler: TestScheduler;
let bodies: number[] = [];
const input = z.object({ key: z.string() });

/** A tool whose body is `body()` (counted, with the frame it started at). */
const toolOf = (body: () => unknown, extra: { retry?: { attempts: number; backoff: { initialMs: number; jitter: number } } } = {}) =>
  defineTool({
    name: 'slow',
    description: 'slow',
    input,
    mode: 'parallel',
    idempotent: true,
    ...extra,
    execute: () => {
      bodies.push(scheduler.now());
      return body();
    },
  });

const call = (id = 'a'): ToolCall => ({ id, name: 'slow', args: { key: id } });
const summary = (r: ToolResult) => (r.status === 'ok' ? { status: r.status, value: r.value, streamed: r.streamed } : { status: r.status, code: r.error.code, trace: r.trace });

describe('execute middleware in virtual time', () => {
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    bodies = [];
  });

  it('return next() around a body of timer(10) answers at frame 10', () => {
    const tool = toolOf(() => timer(10).pipe(map(() => 'v')));
    const pipeline = createPipeline({ tools: [tool], execute: [(_ctx, next) => next()], scheduler });
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('(a|)', { a: call() }).pipe(pipeline.operator(), map(summary))).toBe('10ms (a|)', {
        a: { status: 'ok', value: ['v'], streamed: true },
      });
    });
    expect(bodies).toEqual([0]);
  });

  it('next().pipe(map(...)) emits the body\'s items live, at the body\'s frames, and ends streamed', () => {
    const tool = toolOf(() => scheduler.createColdObservable('--x-y--(z|)', { x: 1, y: 2, z: 3 }));
    const seen: [number, number][] = [];
    const plusOne: ExecuteMiddleware = (_ctx, next) =>
      (next() as NextAnswer<number>).pipe(
        map((x) => {
          seen.push([scheduler.now(), x]);
          return x + 1;
        }),
      );
    const pipeline = createPipeline({ tools: [tool], execute: [plusOne], scheduler });
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('(a|)', { a: call() }).pipe(pipeline.operator(), map(summary))).toBe('-------(a|)', {
        a: { status: 'ok', value: [2, 3, 4], streamed: true },
      });
    });
    expect(seen).toEqual([[2, 1], [4, 2], [7, 3]]);
  });

  it('a late subscriber gets the kept items replayed, then the live ones', () => {
    const tool = toolOf(() => scheduler.createColdObservable('-x-y-(z|)', { x: 1, y: 2, z: 3 }));
    const seen: [string, number, number][] = [];
    const late: ExecuteMiddleware = (_ctx, next) => {
      const answer = next() as NextAnswer<number>;
      answer.subscribe((x) => seen.push(['early', scheduler.now(), x]));
      return timer(2).pipe(map(() => answer.subscribe((x) => seen.push(['late', scheduler.now(), x]))), map(() => 'done'));
    };
    const pipeline = createPipeline({ tools: [tool], execute: [late], scheduler });
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('(a|)', { a: call() }).pipe(pipeline.operator(), map(summary))).toBe('-----(a|)', {
        a: { status: 'ok', value: ['done'], streamed: true },
      });
    });
    expect(seen).toEqual([
      ['early', 1, 1],
      ['late', 2, 1],
      ['early', 3, 2],
      ['late', 3, 2],
      ['early', 5, 3],
      ['late', 5, 3],
    ]);
    expect(bodies).toEqual([0]);
  });

  it('return next() keeps a value a value: streamed stays false', () => {
    const tool = toolOf(() => timer(4).pipe(map(() => 'v')));
    const valueTool = defineTool({ name: 'value', description: 'value', input, mode: 'parallel', execute: () => 'plain' });
    const pipeline = createPipeline({ tools: [tool, valueTool], execute: [(_ctx, next) => next()], scheduler });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(ab|)', { a: { id: 'a', name: 'value', args: { key: 'a' } }, b: call('b') });
      expectObservable(calls.pipe(pipeline.operator(), map(summary))).toBe('a---(b|)', {
        a: { status: 'ok', value: 'plain', streamed: false },
        b: { status: 'ok', value: ['v'], streamed: true },
      });
    });
  });

  it('a value body piped through the middleware emits its value once, and the output is streamed', () => {
    const tool = defineTool({ name: 'value', description: 'value', input, mode: 'parallel', execute: () => 5 });
    const pipeline = createPipeline({ tools: [tool], execute: [(_ctx, next) => (next() as NextAnswer<number>).pipe(map((x) => x * 2))], scheduler });
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('(a|)', { a: { id: 'a', name: 'value', args: { key: 'a' } } }).pipe(pipeline.operator(), map(summary))).toBe('(a|)', {
        a: { status: 'ok', value: [10], streamed: true },
      });
    });
  });

  it('a synchronous body under return next() is answered before subscribe() returns, with no Later waited on', () => {
    const tool = defineTool({ name: 'value', description: 'value', input, mode: 'parallel', execute: () => 'now' });
    const pipeline = createPipeline({ tools: [tool], execute: [(_ctx, next) => next(), (_ctx, next) => next()] });
    const results: ToolResult[] = [];
    let completed = false;
    const waited = vi.spyOn(Later.prototype, 'then');
    try {
      of<ToolCall>({ id: 'a', name: 'value', args: { key: 'a' } }).pipe(pipeline.operator()).subscribe({ next: (r) => results.push(r), complete: () => (completed = true) });
      expect(waited).not.toHaveBeenCalled();
    } finally {
      waited.mockRestore();
    }
    expect(results.map(summary)).toEqual([{ status: 'ok', value: 'now', streamed: false }]);
    expect(completed).toBe(true);
  });

  it('a synchronous body under a piped next() is answered before subscribe() returns, streamed', () => {
    const tool = defineTool({ name: 'value', description: 'value', input, mode: 'parallel', execute: () => 'now' });
    const pipeline = createPipeline({ tools: [tool], execute: [(_ctx, next) => next(), (_ctx, next) => next().pipe(map((v) => v))] });
    const results: ToolResult[] = [];
    let completed = false;
    of<ToolCall>({ id: 'a', name: 'value', args: { key: 'a' } }).pipe(pipeline.operator()).subscribe({ next: (r) => results.push(r), complete: () => (completed = true) });
    expect(results.map(summary)).toEqual([{ status: 'ok', value: ['now'], streamed: true }]);
    expect(completed).toBe(true);
  });

  it('a retry inside a middleware is refused: the same error, traced, and the tool\'s retry runs the body again', () => {
    let attempt = 0;
    const failures: Error[] = [];
    const tool = toolOf(
      () => {
        attempt++;
        const error = new Error(`attempt ${attempt} failed`);
        failures.push(error);
        return attempt === 1 ? scheduler.createColdObservable('--#', {}, error) : scheduler.createColdObservable('-(v|)', { v: 'ok' });
      },
      { retry: { attempts: 2, backoff: { initialMs: 5, jitter: 0 } } },
    );
    const seen: unknown[] = [];
    const retrying: ExecuteMiddleware = (_ctx, next) =>
      next().pipe(
        retry({ count: 3, delay: 0 }) as (source: Observable<unknown>) => Observable<unknown>,
        map((v) => (seen.push(v), v)),
      ) as ObservableInput<unknown>;
    const results: ToolResult[] = [];
    const pipeline = createPipeline({ tools: [tool], execute: [retrying], scheduler });
    scheduler.run(({ cold, expectObservable }) => {
      // attempt 1: 0–2 (its retries refused at once), backoff 5, attempt 2: 7–8
      expectObservable(cold('(a|)', { a: call() }).pipe(pipeline.operator(), map((r) => (results.push(r), r.status)))).toBe('--------(a|)', { a: 'ok' });
    });
    expect(bodies).toEqual([0, 7]);
    const [result] = results;
    expect(result!.attempts).toBe(2);
    expect(result!.trace.filter((e) => e.event === 'retry_refused')).toEqual([
      { stage: 'execute', event: 'retry_refused', policy: 'retrying' },
      { stage: 'execute', event: 'retry_refused', policy: 'retrying' },
      { stage: 'execute', event: 'retry_refused', policy: 'retrying' },
    ]);
    const failed = result!.trace.find((e) => e.event === 'attempt_failed');
    expect(failed).toMatchObject({ attempt: 1, error: { code: 'tool_error', cause: failures[0] } });
  });

  it('items pass through a middleware that returns next() unchanged: the one outside sees them live', () => {
    const tool = toolOf(() => scheduler.createColdObservable('-x--(y|)', { x: 1, y: 2 }));
    const seen: [number, unknown][] = [];
    const outer: ExecuteMiddleware = (_ctx, next) => next().pipe(map((x) => (seen.push([scheduler.now(), x]), x)));
    const pipeline = createPipeline({ tools: [tool], execute: [outer, (_ctx, next) => next()], scheduler });
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('(a|)', { a: call() }).pipe(pipeline.operator(), map(summary))).toBe('----(a|)', {
        a: { status: 'ok', value: [1, 2], streamed: true },
      });
    });
    expect(seen).toEqual([[1, 1], [4, 2]]);
  });

  it('a middleware may return an interop observable: it is collected as a stream', () => {
    const tool = toolOf(() => 'unused');
    let streamed: Observable<string> | undefined;
    const interop: ExecuteMiddleware = () => ({ [Symbol.observable ?? '@@observable']: () => streamed! });
    const pipeline = createPipeline({ tools: [tool], execute: [interop], scheduler });
    scheduler.run(({ cold, expectObservable }) => {
      streamed = cold('-p-(q|)');
      expectObservable(cold('(a|)', { a: call() }).pipe(pipeline.operator(), map(summary))).toBe('---(a|)', {
        a: { status: 'ok', value: ['p', 'q'], streamed: true },
      });
    });
    expect(bodies).toEqual([]);
  });

  it('a stream body that fails midway: the items came live, then its error — the body\'s, with its partial items', () => {
    const boom = new Error('boom');
    const tool = toolOf(() => scheduler.createColdObservable('-x-#', { x: 1 }, boom));
    const seen: unknown[] = [];
    const piped: ExecuteMiddleware = (_ctx, next) => next().pipe(map((x) => (seen.push(x), (x as number) * 10)));
    const results: ToolResult[] = [];
    const pipeline = createPipeline({ tools: [tool], execute: [piped], scheduler });
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('(a|)', { a: call() }).pipe(pipeline.operator(), map((r) => (results.push(r), r.status)))).toBe('---(a|)', { a: 'error' });
    });
    expect(seen).toEqual([1]);
    const [result] = results;
    expect(result).toMatchObject({ status: 'error', error: { code: 'tool_error', cause: boom }, partial: [1] });
  });
});
