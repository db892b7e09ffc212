import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import type { CodeRunResult, CodeRuntime } from '../../../src/ptc/types.js';
import { READY_MS, stretched } from '../../support/timing.js';
import { deferred, expectHealthy, failureOf, sleep, tools, UNREACHED_LIMIT_MS } from './helpers.js';

describe('pool', () => {
  let runtime: CodeRuntime;
  beforeAll(() => {
    runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 2 });
  });
  afterAll(() => runtime.close());

  it('runs two CPU-bound programs at once on two workers', async () => {
    let inside = 0;
    let insideAtFirstLeave = 0;
    const both = deferred();
    const binding = tools({
      // A barrier: it lets the programs on only once both are running (false if the other never came).
      enter: async () => {
        if (++inside === 2) both.resolve();
        return Promise.race([both.promise.then(() => true), sleep(stretched(3000)).then(() => false)]);
      },
      leave: () => {
        insideAtFirstLeave ||= inside;
        inside--;
      },
    });
    // Each then spins 300 ms: the other is still running when the first one leaves.
    const program = 'const met = await tools.enter(); const end = Date.now() + 300; while (Date.now() < end) {} await tools.leave(); return met';
    const results = await Promise.all([runtime.run({ program, bindings: [binding] }), runtime.run({ program, bindings: [binding] })]);
    expect(results).toEqual([{ value: true, logs: [] }, { value: true, logs: [] }]);
    expect(insideAtFirstLeave).toBe(2);
  });

  it('holds a third program in the queue until a worker is free', async () => {
    const gate = deferred();
    const started: string[] = [];
    const binding = tools({
      start: (args) => {
        started.push((args as { name: string }).name);
      },
      hold: () => gate.promise,
    });
    const program = (name: string) => `await tools.start({ name: '${name}' }); await tools.hold(); return '${name}'`;
    const runs = ['a', 'b', 'c'].map((name) => runtime.run({ program: program(name), bindings: [binding] }));
    await vi.waitFor(() => expect(started).toHaveLength(2), { timeout: stretched(5000) });
    await sleep(200);
    expect([...started].sort()).toEqual(['a', 'b']);
    gate.resolve();
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'c'].map((value) => ({ value, logs: [] })));
    expect(started).toHaveLength(3);
  });

  it('runs programs that wait in order, each once', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => runtime.run({ program: `return ${i}`, bindings: [] })));
    expect(results.map((result) => result.value)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it('does not collect a listener per run on a signal shared by many runs', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 15; i++) await runtime.run({ program: 'return 1', bindings: [], signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('close()', () => {
  it('ends the runs in flight and waiting as aborted, waits for them, and refuses later runs', async () => {
    const runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 2 });
    const started = { cpu: deferred(), host: deferred() };
    let hostSignal: AbortSignal | undefined;
    const binding = tools({
      cpu: () => started.cpu.resolve(),
      host: (_args, signal) => {
        hostSignal = signal;
        started.host.resolve();
        return new Promise(() => {});
      },
    });
    const settled: string[] = [];
    const track = (name: string, promise: Promise<CodeRunResult>) => promise.then((result) => (settled.push(name), result));
    const cpu = track('cpu', runtime.run({ program: 'await tools.cpu(); while (true) {}', bindings: [binding] }));
    const host = track('host', runtime.run({ program: 'await tools.host(); return 1', bindings: [binding] }));
    const queued = track('queued', runtime.run({ program: 'return 1', bindings: [] }));
    await Promise.all([started.cpu.promise, started.host.promise]);

    await runtime.close();
    expect(settled.sort()).toEqual(['cpu', 'host', 'queued']);
    for (const result of await Promise.all([cpu, host, queued])) failureOf(result, 'abort');
    expect(hostSignal?.aborted).toBe(true);

    expect(failureOf(await runtime.run({ program: 'return 1', bindings: [] }), 'abort')).toMatch(/closed/);
    await runtime.close(); // twice is fine
  });

  it('closes a runtime that never ran anything', async () => {
    await createQuickJSRuntime().close();
  });

  it('leaves a process free to exit while its workers are idle', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'quickjs-idle-'));
    try {
      const entry = path.join(directory, 'idle.mts');
      const source = fileURLToPath(new URL('../../../src/ptc/quickjs/createQuickJSRuntime.ts', import.meta.url));
      await writeFile(
        entry,
        [
          `import { createQuickJSRuntime } from ${JSON.stringify(source)};`,
          'const runtime = createQuickJSRuntime({ poolSize: 2 });',
          "const results = await Promise.all([1, 2].map((n) => runtime.run({ program: 'return ' + n, bindings: [] })));",
          'console.log(JSON.stringify(results));',
          '// No close(): idle workers must not keep the process alive.',
        ].join('\n'),
      );
      const tsx = createRequire(import.meta.url).resolve('tsx');
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', tsx, entry], { timeout: READY_MS });
      expect(JSON.parse(stdout)).toEqual([{ value: 1, logs: [] }, { value: 2, logs: [] }]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('a runtime that keeps running', () => {
  it('serves many runs with failures in between', async () => {
    const runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 1 });
    try {
      const programs = ['return 1', 'throw new Error("x")', 'return () => 1', 'const a = []; while (true) a.push(new ArrayBuffer(2 ** 20));'];
      for (let round = 0; round < 10; round++) {
        const result = await runtime.run({ program: programs[round % programs.length]!, bindings: [] });
        expect(result.failure?.kind ?? 'ok').toBe(['ok', 'exception', 'invalid-output', 'exception'][round % programs.length]);
      }
      await expectHealthy(runtime);
    } finally {
      await runtime.close();
    }
  });
});
