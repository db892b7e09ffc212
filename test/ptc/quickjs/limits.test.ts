import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import type { CodeRuntime } from '../../../src/ptc/types.js';
import { expectHealthy, failureOf, MiB, tools, UNREACHED_LIMIT_MS } from './helpers.js';

let runtime: CodeRuntime;
beforeAll(() => {
  runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, memoryLimitBytes: 32 * MiB, poolSize: 1 });
});
afterAll(() => runtime.close());
afterEach(() => expectHealthy(runtime));

const OUT_OF_MEMORY = /^InternalError: out of memory|^InternalError: string too long|^RangeError: invalid array length/;

describe('memory bombs end inside the memory limit', () => {
  it.each([
    ['an array of objects', 'const a = []; while (true) a.push({ x: 1 });'],
    ['an array of arrays', 'const a = []; while (true) a.push([1, 2, 3]);'],
    ['an array of distinct strings', 'const a = []; for (let i = 0; ; i++) a.push("s" + i);'],
    ['a filled array', 'return new Array(1e8).fill(0).length'],
    ['a repeated string', 'return "x".repeat(2 ** 29).length'],
    ['a doubling string', 'let s = "x"; while (true) s += s;'],
    ['kept doubling strings', 'let s = "ab"; const keep = []; while (true) { s = s + s; keep.push(s.slice(1)); }'],
    ['one huge ArrayBuffer', 'return new ArrayBuffer(2 ** 30).byteLength'],
    ['many ArrayBuffers', 'const a = []; while (true) a.push(new ArrayBuffer(2 ** 20));'],
    ['many typed arrays', 'const a = []; while (true) a.push(new Float64Array(1e5));'],
    ['a Map', 'const m = new Map(); for (let i = 0; ; i++) m.set(i, { i });'],
  ])('%s', async (_what, program) => {
    // Failed by memory: the time limit is far away (a bomb that fills 32 MiB takes seconds on a busy machine).
    expect(failureOf(await runtime.run({ program, bindings: [] }), 'exception')).toMatch(OUT_OF_MEMORY);
  });

  it('says out of memory when QuickJS has no memory left even for its error', async () => {
    // QuickJS then throws null instead of an InternalError.
    const result = await runtime.run({ program: 'const a = []; while (true) a.push({ x: 1 });', bindings: [] });
    expect(failureOf(result, 'exception')).toBe('InternalError: out of memory (the program used the whole 32 MiB memory limit)');
  });

  it('lets a program catch its own out-of-memory error and go on', async () => {
    const result = await runtime.run({ program: 'try { "x".repeat(2 ** 28) } catch (e) { return e.message }', bindings: [] });
    expect(result).toEqual({ value: 'out of memory', logs: [] });
  });

  it('does not grow the host without bound, run after run', async () => {
    for (let round = 0; round < 5; round++) {
      failureOf(await runtime.run({ program: 'const a = []; while (true) a.push(new Float64Array(1e5));', bindings: [] }), 'exception');
      await expectHealthy(runtime);
    }
    expect(process.memoryUsage().rss).toBeLessThan(1024 * MiB);
  });

  it('ends a memory bomb made of pending tool calls', async () => {
    const result = await runtime.run({
      program: 'const keep = []; for (;;) keep.push(tools.echo({ pad: "x".repeat(100) }).catch((e) => e))',
      bindings: [tools({ echo: (args) => args })],
    });
    expect(failureOf(result, 'exception')).toMatch(OUT_OF_MEMORY);
  });
});

describe('deep recursion', () => {
  it.each([
    ['a recursive function', 'const f = (n: number): number => 1 + f(n + 1); return f(0)'],
    ['a recursive async function', 'const f = async (n: number): Promise<number> => 1 + (await f(n + 1)); return await f(0)'],
    ['a recursive proxy', 'const p: any = new Proxy({}, { get: (_t, k, r) => r[k] }); return p.x'],
    ['a recursive getter', 'const o = { get x(): number { return this.x; } }; return o.x'],
    ['JSON.parse of deep nesting', 'return JSON.parse("[".repeat(1e5) + "]".repeat(1e5))'],
  ])('ends %s as a stack overflow', async (_what, program) => {
    expect(failureOf(await runtime.run({ program, bindings: [] }), 'exception')).toMatch(/^(InternalError|SyntaxError): stack overflow/);
  });

  it('ends a value too deep for JSON as invalid output', async () => {
    const result = await runtime.run({ program: 'let a: unknown[] = []; for (let i = 0; i < 1e5; i++) a = [a]; return a', bindings: [] });
    expect(failureOf(result, 'invalid-output')).toMatch(/stack overflow/);
  });
});
