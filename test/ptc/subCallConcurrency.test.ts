import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createPipeline, defineTool, runCodeTool, type ProgramOutput } from '../../src/index.js';
import { createQuickJSRuntime } from '../../src/ptc/quickjs/index.js';
import { stretched } from '../support/timing.js';
import { UNREACHED_LIMIT_MS } from './quickjs/helpers.js';

// A program's sub-calls run in a pool of their own: without `maxParallelSubCalls` it is bounded by the
// pipeline's `concurrency`, the bound the host set for tool bodies; only an explicit
// `maxParallelSubCalls` sets another.

const runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 1 });
afterAll(() => runtime.close());

/**
 * A parallel tool that counts how many of its bodies run at once. A body ends only once every call has
 * started, or no other body started for 200 ms: bodies the pool lets start together all run together,
 * however slowly the program's calls reach it, so the peak is the pool's bound.
 */
function counted(calls: number) {
  let running = 0;
  let started = 0;
  let peak = 0;
  const read = defineTool({
    name: 'read',
    description: 'Read one item',
    input: z.object({ n: z.number() }),
    mode: 'parallel',
    execute: async ({ n }, { signal }) => {
      peak = Math.max(peak, ++running);
      started++;
      try {
        while (started < calls) {
          const seen = started;
          await sleep(stretched(200), undefined, { signal }); // no other body started meanwhile: all that may run at once do
          if (started === seen) break;
        }
        return n;
      } finally {
        running--;
      }
    },
  });
  return { read, peak: () => peak };
}

const ALL_AT_ONCE = 'return await Promise.all(Array.from({ length: 10 }, (_, n) => tools.read({ n })))';

async function runProgram(options: { readonly concurrency?: number; readonly maxParallelSubCalls?: number }) {
  const { read, peak } = counted(10);
  const { concurrency, maxParallelSubCalls } = options;
  const pipeline = createPipeline({
    tools: [read, runCodeTool(maxParallelSubCalls === undefined ? { runtime } : { runtime, maxParallelSubCalls })],
    ...(concurrency === undefined ? {} : { concurrency }),
  });
  const [result] = await pipeline.run([{ id: 'p1', name: 'run_code', args: { program: ALL_AT_ONCE } }]);
  expect(result?.status, result?.content).toBe('ok');
  expect((result!.value as ProgramOutput).value).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  return peak();
}

describe("a program's sub-calls stay within the pipeline's concurrency", () => {
  it('with concurrency: 2, a Promise.all of 10 calls runs at most 2 bodies at once', async () => {
    expect(await runProgram({ concurrency: 2 })).toBe(2);
  });

  it('with concurrency: 1, one at a time (and the program, which holds a slot itself, still ends)', async () => {
    expect(await runProgram({ concurrency: 1 })).toBe(1);
  });

  it('an explicit maxParallelSubCalls sets the bound, above the concurrency as below it', async () => {
    expect(await runProgram({ concurrency: 2, maxParallelSubCalls: 5 })).toBe(5);
    expect(await runProgram({ concurrency: 8, maxParallelSubCalls: 3 })).toBe(3);
  });

  it('at the default concurrency (10), all ten run together', async () => {
    expect(await runProgram({})).toBe(10);
  });

  it('maxParallelSubCalls is still checked when given', () => {
    expect(() => runCodeTool({ runtime, maxParallelSubCalls: 0 })).toThrow(ConfigError);
  });
});
