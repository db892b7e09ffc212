/**
 * What a program sends the host is bounded before it leaves the interpreter: one call's arguments
 * (`maxArgsChars`) and the arguments of the calls pending at once (`maxPendingArgsChars`). A call over a
 * bound rejects inside the program and its host function never runs.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import type { CodeRuntime } from '../../../src/ptc/types.js';
import { deferred, expectHealthy, sleep, tools, UNREACHED_LIMIT_MS } from './helpers.js';

const runtimes: CodeRuntime[] = [];
afterAll(() => Promise.all(runtimes.map((runtime) => runtime.close())));
const runtimeWith = (options: Parameters<typeof createQuickJSRuntime>[0]) => {
  const runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 1, ...options });
  runtimes.push(runtime);
  return runtime;
};

/** `{"s":"xxx…"}`: `n` characters as JSON. */
const argsOf = (n: number) => `{ s: 'x'.repeat(${n - 8}) }`;

describe('maxArgsChars: one call', () => {
  it('rejects a call over the limit inside the program, naming the limit; one at the limit crosses', async () => {
    const runtime = runtimeWith({ maxArgsChars: 1_000 });
    const received: number[] = [];
    const binding = tools({ take: (args) => void received.push(JSON.stringify(args).length) });
    const result = await runtime.run({
      program: `
        const outcome = (args) => tools.take(args).then(() => 'ran', (e) => [e.name, e.code, e.tool, e.message]);
        return [await outcome(${argsOf(1_000)}), await outcome(${argsOf(1_001)})];`,
      bindings: [binding],
    });
    expect(result).toEqual({
      value: [
        'ran',
        [
          'ToolCallError',
          'args_too_large',
          'tools.take',
          'tools.take: the arguments are 1001 characters as JSON, over the limit of 1000 per call. Send less per call: split the data, or pass a reference to it.',
        ],
      ],
      logs: [],
    });
    expect(received).toEqual([1_000]);
  });

  it('cannot be talked out of the length: a program that tampers with String and JSON still hits the limit', async () => {
    const runtime = runtimeWith({ maxArgsChars: 100 });
    let calls = 0;
    const result = await runtime.run({
      program: `
        const tamper = [
          () => Object.defineProperty(String.prototype, 'length', { get: () => 0 }),
          () => { JSON.stringify = () => '{}'; },
          () => { Object.prototype.toJSON = () => 'x'; },
        ].map((f) => { try { f(); return 'done'; } catch (e) { return e.name; } });
        delete Object.prototype.toJSON;
        return [tamper, await tools.take(${argsOf(101)}).catch((e) => e.code)];`,
      bindings: [tools({ take: () => void calls++ })],
    });
    expect(result).toEqual({ value: [['done', 'done', 'done'], 'args_too_large'], logs: [] }); // each tampering took effect, to no avail
    expect(calls).toBe(0);
  });

  it('defaults to 1,000,000 characters', async () => {
    const runtime = runtimeWith({});
    const received: number[] = [];
    const binding = tools({ take: (args) => void received.push(JSON.stringify(args).length) });
    const result = await runtime.run({
      program: `return [await tools.take(${argsOf(1_000_000)}).then(() => 'ran'), await tools.take(${argsOf(1_000_001)}).catch((e) => e.code)]`,
      bindings: [binding],
    });
    expect(result).toEqual({ value: ['ran', 'args_too_large'], logs: [] });
    expect(received).toEqual([1_000_000]);
  });

  it('a program that re-sends a string far over the limit ends normally; nothing reaches the host', async () => {
    // A 12 MB string sent 10 times: each call is refused in the interpreter's memory. (Copied out,
    // each would have passed through the worker's 16 MiB heap.)
    const runtime = runtimeWith({ resourceLimits: { maxOldGenerationSizeMb: 16 } });
    let calls = 0;
    const result = await runtime.run({
      program: `
        const big = 'x'.repeat(12_000_000);
        const codes = [];
        for (let i = 0; i < 10; i++) codes.push(await tools.write({ big }).catch((e) => e.code));
        return codes;`,
      bindings: [tools({ write: () => void calls++ })],
    });
    expect(result).toEqual({ value: Array(10).fill('args_too_large'), logs: [] });
    expect(calls).toBe(0);
    await expectHealthy(runtime);
  });
});

describe('maxPendingArgsChars: the calls pending at once', () => {
  it('rejects the call that would pass the budget at once, and frees the budget as calls settle', async () => {
    const runtime = runtimeWith({ maxArgsChars: 1_000, maxPendingArgsChars: 3_500 });
    const gate = deferred();
    const thirdStarted = deferred();
    let started = 0;
    const binding = tools({
      slow: async () => {
        if (++started === 3) thirdStarted.resolve();
        await gate.promise;
        return 'done';
      },
    });
    const running = runtime.run({
      program: `
        const first = Array.from({ length: 5 }, () => tools.slow(${argsOf(1_000)}).catch((e) => [e.code, e.message]));
        const outcomes = await Promise.all(first);
        // Everything settled: the whole budget is free again.
        const again = await Promise.all(Array.from({ length: 3 }, () => tools.slow(${argsOf(1_000)}).catch((e) => e.code)));
        return { outcomes, again };`,
      bindings: [binding],
    });
    await thirdStarted.promise;
    await sleep(50); // time for any other call to arrive, were one let through
    expect(started).toBe(3);
    gate.resolve();
    const refusal = [
      'pending_args_too_large',
      "tools.slow: the tool calls already pending have 3000 characters of arguments, and this call's 1000 would pass the limit of 3500 for calls pending at once; await some before starting more.",
    ];
    expect(await running).toEqual({ value: { outcomes: ['done', 'done', 'done', refusal, refusal], again: ['done', 'done', 'done'] }, logs: [] });
    expect(started).toBe(6);
  });

  it('counts a call until its answer reaches the program, failed answers too', async () => {
    const runtime = runtimeWith({ maxArgsChars: 1_000, maxPendingArgsChars: 1_000 });
    const binding = tools({
      fail: async () => {
        throw new Error('no');
      },
    });
    const result = await runtime.run({
      program: `
        const codes = [];
        for (let i = 0; i < 5; i++) codes.push(await tools.fail(${argsOf(1_000)}).catch((e) => e.code));
        const [a, b] = await Promise.all([tools.fail(${argsOf(1_000)}).catch((e) => e.code), tools.fail({}).catch((e) => e.code)]);
        return [...codes, a, b];`,
      bindings: [binding],
    });
    expect(result).toEqual({ value: ['Error', 'Error', 'Error', 'Error', 'Error', 'Error', 'pending_args_too_large'], logs: [] });
  });
});
