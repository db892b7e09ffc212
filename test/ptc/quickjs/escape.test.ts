import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import type { CodeBinding, CodeRuntime, HostFunction } from '../../../src/ptc/types.js';
import { failureOf, tools, UNREACHED_LIMIT_MS } from './helpers.js';

let runtime: CodeRuntime;
beforeAll(() => {
  runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 1 });
});
afterAll(() => runtime.close());

const echo = tools({
  echo: (args) => args,
  fail: () => {
    throw Object.assign(new Error('failed'), { code: 'E_FAIL' });
  },
});
const run = (program: string, bindings: readonly CodeBinding[] = [echo]) => runtime.run({ program, bindings });

/** What a program sees of Node: each probe must come back 'undefined' (typeof) or fail. */
const NODE_GLOBALS = [
  'process', 'require', 'module', 'exports', '__dirname', '__filename', 'Buffer', 'global',
  'setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'queueMicrotask', 'structuredClone',
  'fetch', 'XMLHttpRequest', 'WebSocket', 'Worker', 'WebAssembly', 'SharedArrayBuffer', 'Atomics',
  'std', 'os', 'scriptArgs', 'print', 'hostCall', 'hostLog',
];

function expectHostClean(): void {
  const probe = {} as Record<string, unknown>;
  for (const key of ['polluted', 'fromTools', 'fromArgs', 'fromValue', 'fromPrototype']) {
    expect(probe[key], key).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty(key);
  }
}

describe('the sandbox has no host capability', () => {
  it('has none of Node’s or QuickJS’s host globals', async () => {
    const program = `return ${JSON.stringify(NODE_GLOBALS)}.filter((name) => typeof globalThis[name] !== 'undefined' || eval('typeof ' + name) !== 'undefined')`;
    // SharedArrayBuffer and Atomics are QuickJS's own and share nothing with the host; anything else is a leak.
    const present = (await run(program)).value as string[];
    expect(present.filter((name) => name !== 'SharedArrayBuffer' && name !== 'Atomics')).toEqual([]);
  });

  it.each([
    ['process', 'return process.env'],
    ['require', 'return require("fs")'],
    ['module', 'return module.exports'],
    ['globalThis.process', 'return globalThis.process.pid'],
    ['Buffer', 'return Buffer.from("x")'],
    ['setTimeout', 'await new Promise((resolve) => setTimeout(resolve, 1))'],
    ['fetch', 'return await fetch("http://127.0.0.1/")'],
  ])('cannot reach %s', async (_name, program) => {
    expect(failureOf(await run(program), 'exception')).toMatch(/^(ReferenceError: '?\w+'? is not defined|TypeError: cannot read property)/);
  });

  it.each(['fs', 'node:fs', 'node:child_process', 'std', 'os', './prelude.js', 'data:text/javascript,export default 1'])(
    'cannot import %s',
    async (specifier) => {
      const result = await run(`const m = await import(${JSON.stringify(specifier)}); return Object.keys(m)`);
      expect(failureOf(result, 'exception')).toMatch(/could not load module|SyntaxError|ReferenceError|TypeError/);
    },
  );

  it('gets only the sandbox global from Function("return this") and eval', async () => {
    const result = await run(`
      const viaFunction = Function('return this')();
      const viaEval = (0, eval)('this');
      return [viaFunction === globalThis, viaEval === globalThis, typeof viaFunction.process, eval('typeof process'),
        new Function('return typeof require')()];
    `);
    expect(result).toEqual({ value: [true, true, 'undefined', 'undefined', 'undefined'], logs: [] });
  });

  it('gets only sandbox functions through constructor chains of tools, their results and their errors', async () => {
    const probes = [
      'tools.echo.constructor.constructor("return typeof process")()',
      'tools.echo.constructor.constructor("return this")() === globalThis',
      '(await tools.echo({ a: 1 })).constructor.constructor("return typeof process")()',
      '(await tools.echo([])).constructor.constructor.constructor("return typeof require")()',
      'await tools.fail().catch((e) => e.constructor.constructor("return typeof process")())',
      'await tools.fail().catch((e) => e.constructor === ToolCallError)',
      'console.log.constructor("return typeof process")()',
      'ToolCallError.constructor("return typeof Buffer")()',
    ];
    const result = await run(`return [${probes.join(', ')}]`);
    expect(result).toEqual({ value: ['undefined', true, 'undefined', 'undefined', 'undefined', true, 'undefined', 'undefined'], logs: [] });
    failureOf(await run('return tools.echo.constructor.constructor("return process")()'), 'exception');
  });

  it('finds nothing of the host along prototype chains', async () => {
    const result = await run(`
      const seen = new Set();
      const names = new Set();
      const visit = (value, depth) => {
        if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value) || depth > 4) return;
        seen.add(value);
        for (const key of Reflect.ownKeys(value)) {
          const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
          if (!descriptor || !('value' in descriptor)) continue; // accessors such as RegExp.prototype.global
          if (typeof key === 'string') names.add(key);
          visit(descriptor.value, depth + 1);
        }
        visit(Object.getPrototypeOf(value), depth + 1);
      };
      visit(tools, 0);
      visit(await tools.echo({ a: [1] }), 0);
      visit(await tools.fail().catch((e) => e), 0);
      visit(globalThis, 0);
      return ${JSON.stringify(NODE_GLOBALS)}.filter((name) => names.has(name));
    `);
    expect((result.value as string[]).filter((name) => name !== 'SharedArrayBuffer' && name !== 'Atomics')).toEqual([]);
  });

  it('cannot change its bindings', async () => {
    const result = await run(`
      'use strict';
      const out = [];
      for (const attempt of [() => { tools.echo = 1; }, () => { delete tools.echo; }, () => { tools.extra = 1; }, () => { globalThis.tools = {}; }, () => { tools.echo.x = 1; }]) {
        try { attempt(); out.push('changed'); } catch (e) { out.push(e.name); }
      }
      return [out, typeof tools.echo, Object.isFrozen(tools), Object.getPrototypeOf(tools)];
    `);
    expect(result).toEqual({ value: [['TypeError', 'TypeError', 'TypeError', 'TypeError', 'TypeError'], 'function', true, null], logs: [] });
  });
});

describe('binding names are data', () => {
  const calls: string[] = [];
  const named = (name: string): HostFunction => (args) => {
    calls.push(name);
    return { called: name, args };
  };
  const tricky: CodeBinding = {
    global: 'tools',
    functions: Object.fromEntries(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'].map((name) => [name, named(name)])),
  };

  it('installs __proto__, constructor, toString, hasOwnProperty as ordinary callable names', async () => {
    // Object.fromEntries defines __proto__ as an own property, as a JSON-parsed record would.
    expect(Object.keys(tricky.functions)).toContain('__proto__');
    calls.length = 0;
    const result = await run(
      `return [
        await tools.__proto__({ x: 1 }),
        await tools['constructor']({}),
        await tools.toString(),
        await tools.hasOwnProperty({ key: 'k' }),
        await tools.valueOf(),
        Object.keys(tools).sort(),
        Object.getPrototypeOf(tools),
      ]`,
      [tricky],
    );
    expect(result).toEqual({
      value: [
        { called: '__proto__', args: { x: 1 } },
        { called: 'constructor', args: {} },
        { called: 'toString', args: {} },
        { called: 'hasOwnProperty', args: { key: 'k' } },
        { called: 'valueOf', args: {} },
        ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf'],
        null,
      ],
      logs: [],
    });
    expect(calls).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']);
  });

  it('installs globals named __proto__, Object, undefined or Promise without breaking the runtime', async () => {
    const bindings: CodeBinding[] = [
      { global: '__proto__', functions: { a: () => 'proto' } },
      { global: 'Object', functions: { b: () => 'object' } },
      { global: 'undefined', functions: { c: () => 'undefined' } },
      { global: 'Promise', functions: { d: () => undefined } },
    ];
    const result = await run(
      `
      const out = [await globalThis['__proto__'].a(), await Object.b(), await globalThis['undefined'].c(), await globalThis['Promise'].d()];
      try { await Object.b(() => 1); } catch (e) { out.push(e.code); }
      console.log('logged', { n: 1 });
      return [out, typeof Object.keys];
    `,
      bindings,
    );
    expect(result).toEqual({ value: [['proto', 'object', 'undefined', null, 'invalid_arguments'], 'undefined'], logs: ['logged {"n":1}'] });
    // A program returning nothing still has no value, with a global named undefined.
    expect(await runtime.run({ program: 'return', bindings })).toEqual({ logs: [] });
    expect(failureOf(await runtime.run({ program: 'return NaN', bindings: [{ global: 'Infinity', functions: {} }] }), 'invalid-output')).toMatch(/NaN/);
  });

  it("does not pollute the host's prototypes, whatever the program does", async () => {
    const received: unknown[] = [];
    const binding = tools({
      take: (args) => {
        received.push(args);
        return JSON.parse('{"__proto__": {"fromValue": 1}}');
      },
      ...tricky.functions,
    });
    const result = await run(
      `
      try { tools.__proto__.fromTools = 1; } catch {}
      try { Object.prototype.polluted = 1; Object.prototype.fromPrototype = 1; } catch {}
      const got = await tools.take(JSON.parse('{"__proto__": {"fromArgs": 1}, "constructor": {"prototype": {"polluted": 1}}}'));
      return [({}).polluted, got, JSON.parse('{"__proto__": {"fromValue": 1}}')];
    `,
      [binding],
    );
    expect(result.failure).toBeUndefined();
    expect((result.value as unknown[])[0]).toBe(1); // polluted inside its own sandbox only
    expectHostClean();
    const [args] = received as [Record<string, unknown>];
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    expect(Object.hasOwn(args, '__proto__')).toBe(true);
    const value = (result.value as unknown[])[2] as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(value['fromValue']).toBeUndefined();
  });

  it('isolates runs: what one run changes is gone in the next', async () => {
    await run(`
      globalThis.leak = 'secret';
      Object.prototype.polluted = 1;
      Array.prototype.push = () => 0;
      JSON.stringify = () => '"hacked"';
      console.log = () => {};
    `);
    const result = await run(`
      const a = [];
      a.push(1);
      console.log('still logging');
      return [typeof leak, ({}).polluted, a.length, JSON.stringify({ ok: true })];
    `);
    expect(result).toEqual({ value: ['undefined', null, 1, '{"ok":true}'], logs: ['still logging'] });
    expectHostClean();
  });

  it('keeps the value it returns even when the program replaced JSON.stringify', async () => {
    expect(await run('JSON.stringify = () => "\\"hacked\\""; return { a: 1 }')).toEqual({ value: { a: 1 }, logs: [] });
  });
});
