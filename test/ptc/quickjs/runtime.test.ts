import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import { MAX_PENDING_CALLS } from '../../../src/ptc/quickjs/sandbox.js';
import type { CodeRuntime } from '../../../src/ptc/types.js';
import { deferred, expectHealthy, failureOf, sleep, tools, UNREACHED_LIMIT_MS } from './helpers.js';

let runtime: CodeRuntime;
beforeAll(() => {
  runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 2 });
});
afterAll(() => runtime.close());

const run = (program: string, bindings = [tools({})]) => runtime.run({ program, bindings });

describe('values', () => {
  it('labels itself', () => {
    expect(runtime.language).toBe('typescript');
    expect(runtime.isolation).toBe('quickjs-wasm-worker');
  });

  it('returns the JSON value of the program', async () => {
    expect(await run('return 6 * 7')).toEqual({ value: 42, logs: [] });
    expect(await run('return "héllo 🎉"')).toEqual({ value: 'héllo 🎉', logs: [] });
    expect(await run('return null')).toEqual({ value: null, logs: [] });
    expect(await run('return [true, false, -0.5, { a: { b: [1, "2"] } }]')).toEqual({
      value: [true, false, -0.5, { a: { b: [1, '2'] } }],
      logs: [],
    });
    // JSON semantics: dates become strings, undefined properties disappear.
    expect(await run('return { d: new Date(0), u: undefined, m: new Map([[1, 2]]) }')).toEqual({
      value: { d: '1970-01-01T00:00:00.000Z', m: {} },
      logs: [],
    });
  });

  it('has no value and no failure when the program returns nothing', async () => {
    const result = await run('const x = 1;');
    expect(result).toEqual({ logs: [] });
    expect('value' in result).toBe(false);
    expect(await run('return undefined')).toEqual({ logs: [] });
  });

  it('awaits at the top level', async () => {
    expect(await run('const a = await Promise.resolve(20); await null; return a + (await new Promise((r) => r(22)))')).toEqual({
      value: 42,
      logs: [],
    });
  });

  it('accepts TypeScript: types, interfaces, enums, generics, casts, classes', async () => {
    const program = `
      interface Point {
        readonly x: number;
        y?: number;
      }
      type Pair<T> = [T, T];
      enum Color { Red, Green = 5, Blue }
      const first = <T,>(pair: Pair<T>): T => pair[0];
      class Box<T> {
        constructor(private readonly content: T) {}
        get(): T { return this.content; }
      }
      const p: Point = { x: 1 } as Point;
      const n = (p.y ?? 2)!;
      return [first<number>([p.x, n]), Color.Blue, new Box<string>('b').get(), n satisfies number];
    `;
    expect(await run(program)).toEqual({ value: [1, 6, 'b', 2], logs: [] });
  });
});

describe('console', () => {
  it('captures log, info, warn, error and debug in order, with warn and error prefixed', async () => {
    const result = await run(`
      console.log('one', 2, true, null);
      console.info({ a: [1, { b: 'c' }] });
      console.warn('careful');
      console.error('bad', { code: 1 });
      console.debug('details');
      console.log();
      console.log('last');
    `);
    expect(result).toEqual({
      logs: ['one 2 true null', '{"a":[1,{"b":"c"}]}', '[warn] careful', '[error] bad {"code":1}', 'details', '', 'last'],
    });
  });

  it('renders values without a JSON form as text, and errors by name and message', async () => {
    const result = await run(`
      const cycle: any = {}; cycle.self = cycle;
      const bare = Object.create(null); bare.self = bare;
      console.log(undefined, NaN, -Infinity, 10n, Symbol('s'), cycle, bare, [1, undefined], (a) => a);
      try { await tools.fail(); } catch (e) { console.error(e); }
      console.log(new TypeError('bad'));
    `, [tools({ fail: () => { throw new Error('nope'); } })]);
    expect(result).toEqual({
      logs: ['undefined NaN -Infinity 10 Symbol(s) [object Object] [object] [1,null] (a) => a', '[error] ToolCallError: nope', 'TypeError: bad'],
    });
  });

  it('keeps what the program printed when it then fails', async () => {
    const result = await run('console.log("before"); throw new Error("boom")');
    expect(failureOf(result, 'exception')).toMatch(/^Error: boom/);
    expect(result.logs).toEqual(['before']);
  });
});

describe('host functions', () => {
  it('receives its arguments as JSON and its result reaches the program as a copy', async () => {
    const received: unknown[] = [];
    const shared = { list: [1, 2], nested: { n: 1 } };
    const binding = tools({
      echo: (args) => {
        received.push(args);
        return args;
      },
      shared: () => shared,
      nothing: () => undefined,
    });
    const result = await run(
      `
      const a = await tools.echo({ s: 'x', d: new Date(0), u: undefined, n: [1, null] });
      const none = await tools.echo();
      const first = await tools.shared();
      first.list.push(3);
      first.nested.n = 99;
      const second = await tools.shared();
      return { a, none, first, second, same: first === second, nothing: await tools.nothing() };
    `,
      [binding],
    );
    expect(result).toEqual({
      value: {
        a: { s: 'x', d: '1970-01-01T00:00:00.000Z', n: [1, null] },
        none: {},
        first: { list: [1, 2, 3], nested: { n: 99 } },
        second: { list: [1, 2], nested: { n: 1 } },
        same: false,
      },
      logs: [],
    });
    expect(received).toEqual([{ s: 'x', d: '1970-01-01T00:00:00.000Z', n: [1, null] }, {}]);
    expect(Object.getPrototypeOf(received[0])).toBe(Object.prototype);
    // The host's own object was not touched by the program.
    expect(shared).toEqual({ list: [1, 2], nested: { n: 1 } });
  });

  it('runs concurrent calls of a program at the same time', async () => {
    let inFlight = 0;
    let most = 0;
    const binding = tools({
      wait: async (args) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await sleep(50);
        inFlight--;
        return args;
      },
    });
    await expectHealthy(runtime); // workers started
    const result = await runtime.run({ program: 'return await Promise.all(Array.from({ length: 10 }, (_, i) => tools.wait({ i })))', bindings: [binding] });
    expect(result).toEqual({ value: Array.from({ length: 10 }, (_, i) => ({ i })), logs: [] });
    expect(most).toBe(10); // all ten in flight at once: none waited for another (by count, not by the clock)
  });

  it('turns a throwing host function into a catchable ToolCallError with name, code and message', async () => {
    const binding = tools({
      coded: async () => {
        throw Object.assign(new Error('no such row'), { code: 'E_NOT_FOUND' });
      },
      plain: () => {
        throw new RangeError('out of range');
      },
      text: () => Promise.reject('just a string'),
    });
    const result = await run(
      `
      const caught = [];
      for (const call of [() => tools.coded({}), () => tools.plain(), () => tools.text()]) {
        try {
          await call();
        } catch (e) {
          caught.push([e instanceof ToolCallError, e instanceof Error, e.name, e.code, e.message, e.tool]);
        }
      }
      return caught;
    `,
      [binding],
    );
    expect(result).toEqual({
      value: [
        [true, true, 'ToolCallError', 'E_NOT_FOUND', 'no such row', 'tools.coded'],
        [true, true, 'ToolCallError', 'RangeError', 'out of range', 'tools.plain'],
        [true, true, 'ToolCallError', 'Error', 'just a string', 'tools.text'],
      ],
      logs: [],
    });
  });

  it('rejects inside the program when a host function returns a value without a JSON form', async () => {
    const binding = tools({ big: () => 10n, cyclic: () => { const o: Record<string, unknown> = {}; o['o'] = o; return o; } });
    const result = await run(
      `
      const out = [];
      for (const name of ['big', 'cyclic']) {
        try { await tools[name](); out.push('resolved'); } catch (e) { out.push([e.name, e.code, e.message]); }
      }
      return out;
    `,
      [binding],
    );
    expect(result.failure).toBeUndefined();
    const [big, cyclic] = result.value as [string[], string[]];
    expect(big.slice(0, 2)).toEqual(['ToolCallError', 'TypeError']);
    expect(big[2]).toMatch(/BigInt/);
    expect(cyclic.slice(0, 2)).toEqual(['ToolCallError', 'TypeError']);
    expect(cyclic[2]).toMatch(/circular/i);
  });

  it('rejects arguments without a JSON form before they reach the host', async () => {
    let calls = 0;
    const binding = tools({
      take: () => {
        calls++;
        return 'called';
      },
    });
    const result = await run(
      `
      const out = [];
      const attempts = [() => 1, { f: () => 1 }, [1, 2n], { n: NaN }, { i: -Infinity }, Symbol('s'), { s: Symbol('s') }];
      const cycle: any = {}; cycle.self = cycle; attempts.push(cycle);
      for (const args of attempts) {
        try { await tools.take(args); out.push('called'); } catch (e) { out.push(e instanceof ToolCallError && e.code + ': ' + e.message); }
      }
      return out;
    `,
      [binding],
    );
    const rejections = result.value as string[];
    expect(rejections).toHaveLength(8);
    for (const rejection of rejections) expect(rejection).toMatch(/^invalid_arguments: tools\.take: the arguments are not JSON/);
    expect(rejections[1]).toContain('(at key "f")');
    expect(calls).toBe(0);
  });

  it('rejects calls past the limit of pending calls at once, inside the program', async () => {
    let started = 0;
    const gate = deferred();
    const binding = tools({
      slow: async () => {
        started++;
        await gate.promise;
        return 'done';
      },
    });
    const running = run(
      `
      const calls = [];
      for (let i = 0; i < 3000; i++) calls.push(tools.slow({ i }).catch((e) => e.code));
      const results = await Promise.all(calls);
      const count = (x) => results.filter((r) => r === x).length;
      return [count('done'), count('too_many_calls'), results.length];
    `,
      [binding],
    );
    await sleep(50);
    gate.resolve();
    expect(await running).toEqual({ value: [MAX_PENDING_CALLS, 3000 - MAX_PENDING_CALLS, 3000], logs: [] });
    expect(started).toBe(MAX_PENDING_CALLS);
    await expectHealthy(runtime);
  });

  it('survives a flood of calls that grows the interpreter memory (no host TypeError leaks in)', async () => {
    // Each call allocates in the interpreter; growing its memory used to detach a view QuickJS read the
    // call's promise through, and the program saw "TypeError: Cannot perform ... detached ArrayBuffer".
    const fresh = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 1 });
    try {
      const result = await fresh.run({
        program: `
          const calls = [];
          for (let i = 0; i < 10000; i++) calls.push(tools.echo({ i }).then(() => 'ok', (e) => e.code ?? String(e)));
          return [...new Set(await Promise.all(calls))].sort();
        `,
        bindings: [tools({ echo: (args) => args })],
      });
      expect(result).toEqual({ value: ['ok', 'too_many_calls'], logs: [] });
    } finally {
      await fresh.close();
    }
  });

  it("aborts a host function's signal when the run ends while it is pending", async () => {
    const signals: AbortSignal[] = [];
    const started = deferred();
    const binding = tools({
      pending: (_args, signal) => {
        signals.push(signal);
        started.resolve();
        return new Promise(() => {});
      },
    });
    // The program returns while its call is still pending: the run ends, and the call's signal aborts.
    const result = await run('tools.pending({}); return 1', [binding]);
    expect(result).toEqual({ value: 1, logs: [] });
    await started.promise;
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
  });
});
