import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ExecuteMiddleware, type ToolDefinition } from '../../src/index.js';
import { virtualClock } from './virtualClock.js';

// Time is virtual (see `virtualClock`): every duration below is exact, and no test waits for it.
const input = z.object({ key: z.string(), ms: z.number() });
type Args = z.output<typeof input>;

/** A tool whose body sleeps `ms` on `clock`, honouring its signal; `plan` says which attempts throw. */
function sleeper(clock: ReturnType<typeof virtualClock>, facts: Partial<ToolDefinition<typeof input>> = {}, failFirst = 0) {
  const attempts: number[] = [];
  const aborted: [number, unknown][] = [];
  const tool = defineTool({
    name: 'sleep',
    description: 'sleeps',
    input,
    mode: 'parallel',
    idempotent: true,
    ...facts,
    execute: async ({ ms }: Args, ctx) => {
      attempts.push(clock.now());
      ctx.signal.addEventListener('abort', () => aborted.push([clock.now(), ctx.signal.reason]));
      await clock.sleep(ms, ctx.signal);
      if (attempts.length <= failFirst) throw new Error(`attempt ${attempts.length} failed`);
      return `slept ${ms}`;
    },
  });
  return { tool, attempts, aborted };
}

describe('the execute chain in time', () => {
  it('a wrapper times the body: its next() settles when the body did', async () => {
    const clock = virtualClock();
    const { tool } = sleeper(clock);
    const timings: [string, number][] = [];
    const timed: ExecuteMiddleware = async (ctx, next) => {
      const started = clock.now();
      try {
        return await next();
      } finally {
        timings.push([ctx.call.id, clock.now() - started]);
      }
    };
    const pipeline = createPipeline({ tools: [tool], execute: [timed], scheduler: clock.scheduler });
    const results = await clock.run(
      pipeline.run([
        { id: 'a', name: 'sleep', args: { key: 'a', ms: 30 } },
        { id: 'b', name: 'sleep', args: { key: 'b', ms: 5 } },
      ]),
    );
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok']);
    expect(timings).toEqual([['b', 5], ['a', 30]]);
  });

  it('the call\'s time limit covers the whole chain: a slow middleware before the body counts', async () => {
    const clock = virtualClock();
    const { tool, attempts } = sleeper(clock, { timeoutMs: 100 });
    const slowLookup: ExecuteMiddleware = async (ctx, next) => {
      await clock.sleep(80, ctx.signal);
      return next();
    };
    const pipeline = createPipeline({ tools: [tool], execute: [slowLookup], scheduler: clock.scheduler });
    const [result] = await clock.run(pipeline.run([{ id: 'a', name: 'sleep', args: { key: 'a', ms: 50 } }]));
    expect([result?.status, result?.error?.code]).toEqual(['error', 'timeout']);
    expect(attempts).toEqual([80]);
    expect(clock.now()).toBe(100);
  });

  it('next({ timeoutMs }) shorter than the call\'s own ends the attempt as a timeout then; a longer one is ignored', async () => {
    const clock = virtualClock();
    const { tool, aborted } = sleeper(clock, { timeoutMs: 1_000 });
    const deadlines: (number | undefined)[] = [];
    const within = (ms: number): ExecuteMiddleware => (ctx, next) => (deadlines.push(ctx.deadline), next({ timeoutMs: ms }));
    const inner: ExecuteMiddleware = (ctx, next) => (deadlines.push(ctx.deadline), next());

    const tightened = createPipeline({ tools: [tool], execute: [within(50), inner], scheduler: clock.scheduler });
    const [short] = await clock.run(tightened.run([{ id: 'a', name: 'sleep', args: { key: 'a', ms: 200 } }]));
    expect(short?.error).toMatchObject({ code: 'timeout', timeoutMs: 50, message: 'Tool "sleep" timed out after 50 ms.' });
    expect(aborted.map(([at, reason]) => [at, (reason as DOMException).name])).toEqual([[50, 'TimeoutError']]);
    expect(deadlines).toEqual([1_000, 50]);

    const loosened = createPipeline({ tools: [tool], execute: [within(5_000), inner], scheduler: clock.scheduler });
    const startedAt = clock.now();
    const [long] = await clock.run(loosened.run([{ id: 'b', name: 'sleep', args: { key: 'b', ms: 2_000 } }]));
    expect(long?.error).toMatchObject({ code: 'timeout', timeoutMs: 1_000 });
    expect(clock.now() - startedAt).toBe(1_000);
    expect(deadlines.slice(2)).toEqual([startedAt + 1_000, startedAt + 1_000]);
  });

  it('a retried call runs the chain once per attempt, with ctx.attempt 1, 2, 3', async () => {
    const clock = virtualClock();
    const { tool, attempts } = sleeper(clock, { retry: { attempts: 3, backoff: { initialMs: 10, factor: 1, maxMs: 10, jitter: 0 } } }, 2);
    const seen: number[] = [];
    const pipeline = createPipeline({ tools: [tool], execute: [(ctx, next) => (seen.push(ctx.attempt), next())], scheduler: clock.scheduler });
    const [result] = await clock.run(pipeline.run([{ id: 'a', name: 'sleep', args: { key: 'a', ms: 5 } }]));
    expect([result?.status, result?.attempts]).toEqual(['ok', 3]);
    expect(seen).toEqual([1, 2, 3]);
    expect(attempts).toEqual([0, 15, 30]); // 5 ms each, 10 ms apart
  });

  it('a tightened timeout is a timeout of the attempt: the tool\'s retry runs the chain again', async () => {
    const clock = virtualClock();
    const { tool, attempts } = sleeper(clock, { timeoutMs: 1_000, retry: { attempts: 2, backoff: { initialMs: 10, factor: 1, maxMs: 10, jitter: 0 } } });
    const seen: number[] = [];
    const firstQuick: ExecuteMiddleware = (ctx, next) => (seen.push(ctx.attempt), ctx.attempt === 1 ? next({ timeoutMs: 20 }) : next());
    const pipeline = createPipeline({ tools: [tool], execute: [firstQuick], scheduler: clock.scheduler });
    const [result] = await clock.run(pipeline.run([{ id: 'a', name: 'sleep', args: { key: 'a', ms: 100 } }]));
    expect([result?.status, result?.attempts]).toEqual(['ok', 2]);
    expect(seen).toEqual([1, 2]);
    expect(attempts).toEqual([0, 30]);
    expect(result?.trace).toContainEqual(expect.objectContaining({ event: 'attempt_failed', attempt: 1, error: expect.objectContaining({ code: 'timeout', timeoutMs: 20 }) }));
  });

  it('a middleware\'s own failure is never retried, even after a body error the tool would retry', async () => {
    const clock = virtualClock();
    const { tool, attempts } = sleeper(clock, { retry: { attempts: 3, backoff: { initialMs: 10, factor: 1, maxMs: 10, jitter: 0 } } }, 3);
    const wrapping: ExecuteMiddleware = async function wrapping(_ctx, next) {
      try {
        return await next();
      } catch (error) {
        throw new Error(`wrapped: ${(error as Error).message}`); // not the body's error: the middleware's own
      }
    };
    const pipeline = createPipeline({ tools: [tool], execute: [wrapping], scheduler: clock.scheduler });
    const [result] = await clock.run(pipeline.run([{ id: 'a', name: 'sleep', args: { key: 'a', ms: 5 } }]));
    expect([result?.status, result?.error?.code, result?.attempts]).toEqual(['error', 'policy_error', 1]);
    expect(result?.content).toMatch(/execute middleware "wrapping" threw: wrapped: attempt 1 failed after the body ran/);
    expect(attempts).toEqual([0]);
  });

  it('cancel-rest aborts a body inside the chain; its slot is held until the chain settled', async () => {
    const clock = virtualClock();
    const { tool, attempts, aborted } = sleeper(clock);
    const failing = defineTool({ name: 'fail', description: 'fails', input, mode: 'parallel', onError: 'cancel-rest', execute: async ({ ms }) => (await clock.sleep(ms), Promise.reject(new Error('no'))) });
    const unwound: [string, number][] = [];
    const slowUnwind: ExecuteMiddleware = async (ctx, next) => {
      try {
        return await next();
      } finally {
        await clock.sleep(30);
        unwound.push([ctx.call.id, clock.now()]);
      }
    };
    const pipeline = createPipeline({ tools: [tool, failing], execute: [slowUnwind], concurrency: 2, abortGraceMs: 1_000, scheduler: clock.scheduler });
    const results = await clock.run(
      pipeline.run([
        { id: 'a', name: 'sleep', args: { key: 'a', ms: 500 }, turn: 't1' },
        { id: 'f', name: 'fail', args: { key: 'f', ms: 10 }, turn: 't1' },
        { id: 'c', name: 'sleep', args: { key: 'c', ms: 5 }, turn: 't2' },
        { id: 'd', name: 'sleep', args: { key: 'd', ms: 5 }, turn: 't2' },
      ]),
    );
    expect(results.map((r) => [r.id, r.status])).toEqual([['a', 'cancelled'], ['f', 'error'], ['c', 'ok'], ['d', 'ok']]);
    // f's body failed at 10; its failure counts once its chain settled, at 40: then a is cancelled and
    // its body aborted, while its middleware unwinds until 70. c takes f's slot at 40, d a's at 70.
    expect(aborted.map(([at]) => at)).toEqual([40]);
    expect(attempts).toEqual([0, 40, 70]);
    expect(unwound.slice(0, 2)).toEqual([['f', 40], ['a', 70]]);
  });
});
