import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import type { CodeRuntime } from '../../../src/ptc/types.js';
import { expectHealthy, failureOf, MiB, UNREACHED_LIMIT_MS } from './helpers.js';

/*
 * The worker's own V8 heap (not the interpreter's memory) runs out: Node terminates the worker
 * (ERR_WORKER_OUT_OF_MEMORY) and the run ends as 'worker-exit'.
 *
 * Only many allocations of moderate size are used on purpose: one allocation far larger than the
 * worker's heap limit (say a 100 MB string under a 12 MB limit) makes V8 abort the whole process
 * rather than the worker (https://github.com/nodejs/node/issues/47224), which would take the test
 * runner down with it.
 */
let runtime: CodeRuntime;
beforeAll(() => {
  runtime = createQuickJSRuntime({
    timeoutMs: UNREACHED_LIMIT_MS,
    poolSize: 1,
    memoryLimitBytes: 512 * MiB,
    maxLogChars: Infinity,
    maxValueChars: Infinity,
    resourceLimits: { maxOldGenerationSizeMb: 12 },
  });
});
afterAll(() => runtime.close());

describe("'worker-exit'", () => {
  it('ends a run whose output exhausts the worker heap, and a fresh worker runs the next program', async () => {
    const result = await runtime.run({ program: 'const line = "x".repeat(100_000); for (;;) console.log(line)', bindings: [] });
    expect(failureOf(result, 'worker-exit')).toMatch(/worker thread stopped .*memory limit/);
    expect(result.logs).toEqual([]);
    await expectHealthy(runtime);
  });

  it('happens again on the replacement worker', async () => {
    const result = await runtime.run({ program: 'const line = "y".repeat(20_000); for (;;) console.log(line)', bindings: [] });
    failureOf(result, 'worker-exit');
    await expectHealthy(runtime);
  });

  it('returns a value larger than the worker heap limit: its JSON crosses as text and is parsed on the main thread', async () => {
    const result = await runtime.run({ program: 'return "v".repeat(20 * 2 ** 20)', bindings: [] });
    expect(result.failure).toBeUndefined();
    expect(result.value).toHaveLength(20 * MiB);
    const many = await runtime.run({ program: 'return Array.from({ length: 500_000 }, (_, i) => "k" + i)', bindings: [] });
    expect(many.failure).toBeUndefined();
    expect((many.value as string[])[499_999]).toBe('k499999');
  });
});
