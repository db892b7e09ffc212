import { describe, expect, it } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';

describe('the runtime lifecycle', () => {
  it("bills a program's time limit from its start, not from its worker's boot", async () => {
    // A cold worker loads tsx, QuickJS and sucrase first (hundreds of ms here); the program itself is instant.
    const runtime = createQuickJSRuntime({ timeoutMs: 100, poolSize: 1 });
    try {
      expect(await runtime.run({ program: 'return 1', bindings: [] })).toEqual({ value: 1, logs: [] });
      expect((await runtime.run({ program: 'while (true) {}', bindings: [] })).failure?.kind).toBe('timeout');
    } finally {
      await runtime.close();
    }
  });

  it('a run aborted while its worker boots ends as abort, and the worker is not thrown away', async () => {
    const runtime = createQuickJSRuntime({ poolSize: 1 });
    try {
      const controller = new AbortController();
      const pending = runtime.run({ program: 'while (true) {}', bindings: [], signal: controller.signal });
      setTimeout(() => controller.abort(), 5);
      expect((await pending).failure?.kind).toBe('abort');
      expect(await runtime.run({ program: 'return 2', bindings: [] })).toEqual({ value: 2, logs: [] });
    } finally {
      await runtime.close();
    }
  });

  it('close() right after a first run waits for the worker being started, and no worker starts after it', async () => {
    const before = new Set(process.getActiveResourcesInfo());
    const runtime = createQuickJSRuntime({ poolSize: 2 });
    const runs = [runtime.run({ program: 'return 1', bindings: [] }), runtime.run({ program: 'return 2', bindings: [] })];
    await runtime.close();
    expect((await Promise.all(runs)).map((result) => result.failure?.kind)).toEqual(['abort', 'abort']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const left = process.getActiveResourcesInfo().filter((resource) => !before.has(resource) && resource !== 'Timeout');
    expect(left).toEqual([]);
  });
});
