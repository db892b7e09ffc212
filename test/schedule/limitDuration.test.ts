import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, renderTimeline, type ToolResult } from '../../src/index.js';
import { callsFromResults } from '../../src/observe/timeline/fromResults.js';
import { stretched } from '../support/timing.js';

const input = z.object({});
const tool = (name: string, scheduling: object, ms: number) =>
  defineTool({ name, description: name, input, mode: 'parallel', ...scheduling, execute: async () => { await sleep(ms); return name; } });
const calls = (name: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${name}${i}`, name, args: {} }));

describe('timing.durations.limit: the part of the queue spent waiting for a limit or rate limit', () => {
  it('counts the wait for a permit and for a token, inside queue; a wait for a slot only is not limit time', async () => {
    // Each body runs 30 ms on an idle machine, longer on a busy one: the six calls are all taken in
    // before the first body ends, so plain1 waits for a slot.
    const ms = stretched(30);
    const pipeline = createPipeline({
      tools: [tool('lim', { limit: { max: 1 } }, ms), tool('rate', { rateLimit: { max: 1, perMs: 60 } }, ms), tool('plain', {}, ms)],
      concurrency: 3,
    });
    const [lim0, lim1, rate0, rate1, plain0, plain1] = await pipeline.run([...calls('lim', 2), ...calls('rate', 2), ...calls('plain', 2)]);
    // lim1 waited a body's time for lim0's permit; rate1 ~60 ms for rate0's token; plain1 only for a slot.
    expect(lim0!.timing.durations.limit).toBe(0);
    expect(lim1!.timing.durations.limit).toBeGreaterThanOrEqual(ms - 5);
    expect(rate1!.timing.durations.limit).toBeGreaterThanOrEqual(55);
    for (const r of [lim0, lim1, rate0, rate1, plain0, plain1]) expect(r!.timing.durations.limit).toBeLessThanOrEqual(r!.timing.durations.queue);
    expect(plain1!.timing.durations.queue).toBeGreaterThan(10);
    expect(plain1!.timing.durations.limit).toBe(0);
  });

  it('renderTimeline draws it as its own wait, just before the start, and the rest of the queue as queue', () => {
    const timing = { receivedAt: 0, startedAt: 50, endedAt: 60, finishedAt: 61, durations: { intake: 1, policy: 4, queue: 45, limit: 30, execute: 10, post: 1, total: 61 } };
    const result = { id: 'a', name: 'search', index: 0, turn: undefined, status: 'ok', value: 1, streamed: false, content: '1', args: {}, originalArgs: {}, rewrittenBy: [], decision: 'allow', trace: [], meta: {}, omitted: undefined, started: true, attempts: 1, timing } as ToolResult;
    const [call] = callsFromResults([result], new Set());
    expect(call!.waits).toEqual([{ kind: 'policy', from: 1, to: 5 }, { kind: 'queue', from: 5, to: 20 }, { kind: 'limit', from: 20, to: 50 }]);
    const svg = renderTimeline([result]);
    expect(svg).toMatch(/<rect [^>]*data-wait="limit" data-call-id="a"/);
    expect(svg).toContain('data-legend="limit"');
  });
});
