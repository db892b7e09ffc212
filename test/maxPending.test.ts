import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from '../src/index.js';

/** One slow call first, then `fast` quick ones; counts how many bodies started while the slow one ran. */
async function straggler(maxPending: number, fast = 50) {
  let slowRunning = false;
  let startedBehind = 0;
  const tool = defineTool({
    name: 't',
    description: 't',
    input: z.object({ ms: z.number() }),
    mode: 'parallel',
    execute: async ({ ms }) => {
      if (ms > 10) slowRunning = true;
      else if (slowRunning) startedBehind++;
      await sleep(ms);
      if (ms > 10) slowRunning = false;
      return ms;
    },
  });
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
    const { startedBehind } = await straggler(Infinity);
    expect(startedBehind).toBe(50);
  });

  it('never deadlocks: with maxPending 1 every call still gets its result', async () => {
    const { results } = await straggler(1, 30);
    expect(results).toHaveLength(31);
  });

  it('is validated', () => {
    expect(() => createPipeline({ tools: [], maxPending: 0 })).toThrow(/`maxPending` must be a positive integer or Infinity/);
  });
});
