import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type PrePolicy } from '../src/index.js';
import { never } from './faults/helpers.js';

const hangs = defineTool({ name: 'hangs', description: 'never settles, ignores its signal', input: z.object({}), mode: 'parallel', execute: () => never() });
const ask: PrePolicy = function ask(ctx) {
  return ctx.call.name === 'asked' ? { decision: 'ask' } : undefined;
};
const asked = defineTool({ name: 'asked', description: 'needs approval', input: z.object({}), mode: 'parallel', execute: () => 'ran' });

describe('with every option at its default, every call is answered in bounded time', () => {
  afterEach(() => void vi.useRealTimers());

  it('a body that never settles is answered timeout after 5 minutes; an approval nobody gives is denied after 10', async () => {
    vi.useFakeTimers();
    const pipeline = createPipeline({ tools: [hangs, asked], pre: [ask], approve: () => never() });
    const answered: string[] = [];
    const body = pipeline.run([{ id: '1', name: 'hangs', args: {} }]).finally(() => answered.push('body'));
    const approval = pipeline.run([{ id: '2', name: 'asked', args: {} }]).finally(() => answered.push('approval'));
    await vi.advanceTimersByTimeAsync(299_000);
    expect(answered).toEqual([]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(answered).toEqual(['body']);
    await vi.advanceTimersByTimeAsync(300_000);
    expect(answered).toEqual(['body', 'approval']);
    const [[timedOut], [denied]] = await Promise.all([body, approval]);
    expect(timedOut?.error).toMatchObject({ code: 'timeout', timeoutMs: 300_000 });
    expect(denied?.error?.code).toBe('approval_timeout');
  });

  it('Infinity opts out, for the pipeline and for a tool', async () => {
    vi.useFakeTimers();
    const long = defineTool({ name: 'long', description: 'runs for hours', input: z.object({}), timeoutMs: Infinity, execute: () => never() });
    let answered = false;
    void createPipeline({ tools: [long] }).run([{ id: '1', name: 'long', args: {} }]).finally(() => (answered = true));
    void createPipeline({ tools: [hangs], defaultTimeoutMs: Infinity }).run([{ id: '1', name: 'hangs', args: {} }]).finally(() => (answered = true));
    await vi.advanceTimersByTimeAsync(24 * 3_600_000);
    expect(answered).toBe(false);
  });
});
