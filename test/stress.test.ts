import { from, lastValueFrom, range, map, toArray, take } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from '../src/index.js';

// Sizes at which the built-in mergeMap/concatMap composition breaks (stack overflow from ~1.5k
// synchronously completing inners, silent non-completion from ~2k, quadratic shift() at 100k).
const parallel = defineTool({ name: 'p', description: 'p', input: z.object({ i: z.number() }), mode: 'parallel', execute: ({ i }) => i });
const asyncParallel = defineTool({
  name: 'ap',
  description: 'ap',
  input: z.object({ i: z.number() }),
  mode: 'parallel',
  execute: async ({ i }) => i,
});
const failing = defineTool({
  name: 'fail',
  description: 'fails after a tick',
  input: z.object({}),
  mode: 'parallel',
  execute: () => new Promise((_, reject) => setTimeout(() => reject(new Error('boom')), 5)),
});

const calls = (n: number, name: string): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name, args: { i } }));

describe('large backlogs', () => {
  it('cancel-rest over a 20k-call backlog cancels every queued call and completes', async () => {
    const pipeline = createPipeline({ tools: [failing, asyncParallel], concurrency: 1, onError: 'cancel-rest' });
    const results = await pipeline.run([{ id: 'first', name: 'fail', args: {} }, ...calls(20_000, 'ap')]);
    expect(results).toHaveLength(20_001);
    expect(results[0]!.error?.code).toBe('tool_error');
    expect(results.slice(1).every((r) => r.status === 'cancelled' && r.error?.code === 'cancelled' && !r.started)).toBe(true);
  });

  it('20k intake errors in a row complete without overflowing the stack', async () => {
    const pipeline = createPipeline({ tools: [parallel] });
    const results = await pipeline.run(calls(20_000, 'missing'));
    expect(results).toHaveLength(20_000);
    expect(results.every((r) => r.error?.code === 'unknown_tool')).toBe(true);
  });

  it('a 100k-call synchronous source with synchronous bodies: every result, in order', async () => {
    const pipeline = createPipeline({ tools: [parallel] });
    const results = await lastValueFrom(from(calls(100_000, 'p')).pipe(pipeline.operator(), toArray()));
    expect(results).toHaveLength(100_000);
    expect(results.every((r, i) => r.index === i && r.status === 'ok' && r.value === i)).toBe(true);
  });

  it('a 100k-call synchronous source with async bodies keeps the pool bounded and the order', async () => {
    const pipeline = createPipeline({ tools: [asyncParallel], concurrency: 10 });
    const results = await pipeline.run(calls(100_000, 'ap'));
    expect(results.every((r, i) => r.index === i && r.value === i)).toBe(true);
  });

  it('a synchronous source stops when the consumer unsubscribes midway', async () => {
    const pipeline = createPipeline({ tools: [parallel] });
    let pulled = 0;
    const source = range(0, 1_000_000).pipe(map((i) => (pulled++, { id: `c${i}`, name: 'p', args: { i } })));
    const results = await lastValueFrom(source.pipe(pipeline.operator(), take(3), toArray()));
    expect(results.map((r) => r.value)).toEqual([0, 1, 2]);
    expect(pulled).toBe(3);
  });
});
