import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import type { CodeRuntime } from '../../../src/ptc/types.js';
import { stretched } from '../../support/timing.js';
import { deferred, expectHealthy, failureOf, positionOf, timed, tools, UNREACHED_LIMIT_MS } from './helpers.js';

const TIMEOUT_MS = 1000;

let runtime: CodeRuntime;
beforeAll(() => {
  runtime = createQuickJSRuntime({ timeoutMs: TIMEOUT_MS, poolSize: 1 });
});
afterAll(() => runtime.close());
// After every failure, the next program on the same runtime runs normally.
afterEach(() => expectHealthy(runtime));

const run = (program: string, bindings = [tools({})], signal?: AbortSignal) =>
  runtime.run(signal === undefined ? { program, bindings } : { program, bindings, signal });

/** `line L, column C` of `token` (plus `offset` characters) in `program`. */
const where = (program: string, token: string, offset = 0) => {
  const { line, column } = positionOf(program, token, offset);
  return `line ${line}, column ${column}`;
};
const at = (program: string, token: string, offset = 0) => `at ${where(program, token, offset)}`;

describe("'exception'", () => {
  it('names the line and column of a runtime error in JavaScript', async () => {
    const program = 'const y = null;\nreturn y.a';
    const message = failureOf(await run(program), 'exception');
    expect(message).toBe(`TypeError: cannot read property 'a' of null\n    ${at(program, 'y.a', 1)}`);
  });

  it('maps positions back to the TypeScript source when types on the same line shift the columns', async () => {
    // Line 1 also carries the wrapper's opening; the types removed before `y.a` shift it by 39 columns.
    const first = 'const y: { a: { b: string } } = null as unknown as { a: { b: string } }; return y.a';
    expect(failureOf(await run(first), 'exception')).toBe(`TypeError: cannot read property 'a' of null\n    ${at(first, 'y.a', 1)}`);

    const later = [
      'interface A {',
      '  a: number;',
      '  b: string;',
      '}',
      'enum E { X, Y }',
      'const v: A = { a: 1, b: "" } as A; const w: number = v.a as number; (w as any).call()',
    ].join('\n');
    expect(failureOf(await run(later), 'exception')).toBe(`TypeError: not a function\n    ${at(later, '.call()', 5)}`);
  });

  it('maps every frame of the stack', async () => {
    const program = [
      'function inner(x: number): number {',
      '  return (x as any).toFixed.nope.deeper;',
      '}',
      'function outer(): void { inner(1 as number); }',
      'outer();',
    ].join('\n');
    expect(failureOf(await run(program), 'exception')).toBe(
      [
        "TypeError: cannot read property 'deeper' of undefined",
        `    at inner (${where(program, '.deeper')})`,
        `    at outer (${where(program, 'inner(1', 5)})`,
        `    ${at(program, 'outer();', 5)}`,
      ].join('\n'),
    );
  });

  it('names the position of a syntax error, found by the TypeScript stripper or by QuickJS', async () => {
    expect(failureOf(await run('const a: number = 1\nconst b = a +'), 'exception')).toBe('SyntaxError: Unexpected token\n    at line 2, column 14');
    const program = '\n\nconst s: string = "abc";\n  @@';
    expect(failureOf(await run(program), 'exception')).toBe(`SyntaxError: unexpected token in expression: '@'\n    ${at(program, '@@')}`);
  });

  it("shows an uncaught ToolCallError's code, and where the program made the call", async () => {
    const binding = tools({
      lookup: async () => {
        throw Object.assign(new Error('no such row'), { code: 'E_NOT_FOUND' });
      },
    });
    expect(failureOf(await run('await tools.lookup({ id: 1 })', [binding]), 'exception')).toBe('ToolCallError [E_NOT_FOUND]: no such row\n    at line 1, column 19');
    const program = 'const id: number = 1;\nif (id) {\n  const row = await tools.lookup({ id });\n}';
    expect(failureOf(await run(program, [binding]), 'exception')).toBe('ToolCallError [E_NOT_FOUND]: no such row\n    at line 3, column 33');
  });

  it('describes a thrown value that is not an error', async () => {
    expect(failureOf(await run('throw "plain"'), 'exception')).toBe('Uncaught "plain"');
    expect(failureOf(await run('throw { a: 1 }'), 'exception')).toBe('Uncaught {"a":1}');
    expect(failureOf(await run('throw null'), 'exception')).toBe('Uncaught null');
  });

  it('ends a program that awaits a promise nothing can settle', async () => {
    expect(failureOf(await run('await new Promise(() => {})'), 'exception')).toMatch(/can never settle/);
  });
});

describe("'timeout'", () => {
  it('stops `while (true) {}` at about the time limit, keeping what it printed', async () => {
    const { result, ms } = await timed(runtime, 'console.log("started"); while (true) {}');
    expect(failureOf(result, 'timeout')).toMatch(`ran past its time limit of ${TIMEOUT_MS} ms`);
    expect(result.logs).toEqual(['started']);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(TIMEOUT_MS + stretched(1500));
  });

  it('stops a program awaiting a host function that never settles, and aborts its signal', async () => {
    let signal: AbortSignal | undefined;
    const binding = tools({
      hang: (_args, received) => {
        signal = received;
        return new Promise(() => {});
      },
    });
    const { result, ms } = await timed(runtime, 'await tools.hang({}); return "unreachable"', [binding]);
    failureOf(result, 'timeout');
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(signal?.aborted).toBe(true);
  });

  it('terminates the worker of a program that does not reach an interrupt check in time', async () => {
    // Each `indexOf` scans 10 MB and QuickJS checks for interrupts once per ~10,000 loop iterations.
    const { result, ms } = await timed(runtime, 'const s = "x".repeat(1e7); for (;;) s.indexOf("y")');
    expect(failureOf(result, 'timeout')).toBe(`The program ran past its time limit of ${TIMEOUT_MS} ms and was stopped. Do less per program, or make fewer tool calls one after another.`);
    expect(ms).toBeLessThan(TIMEOUT_MS + stretched(1500));
  });

  it('stops a program whose every interrupt is swallowed by a promise executor', async () => {
    failureOf(await run('for (;;) new Promise(() => { while (true) {} })'), 'timeout');
  });
});

describe("'abort'", () => {
  it('ends a CPU-bound program within 500 ms of its signal aborting (on an idle machine)', async () => {
    for (const loop of ['while (true) {}', 'const s = "x".repeat(1e7); for (;;) s.indexOf("y")']) {
      const controller = new AbortController();
      const started = deferred();
      const binding = tools({ started: () => started.resolve() });
      const running = run(`await tools.started(); ${loop}`, [binding], controller.signal);
      await started.promise;
      const abortedAt = performance.now();
      controller.abort();
      const result = await running;
      const ms = performance.now() - abortedAt;
      expect(failureOf(result, 'abort')).toMatch(/cancelled/);
      expect(ms).toBeLessThan(stretched(500));
    }
  });

  it('ends a program waiting on a host function, and aborts the host function', async () => {
    const controller = new AbortController();
    let signal: AbortSignal | undefined;
    const binding = tools({
      hang: (_args, received) => {
        signal = received;
        controller.abort();
        return new Promise(() => {});
      },
    });
    failureOf(await run('await tools.hang({})', [binding], controller.signal), 'abort');
    expect(signal?.aborted).toBe(true);
  });

  it('does not start a program whose signal already aborted', async () => {
    let calls = 0;
    const binding = tools({ mark: () => calls++ });
    const result = await run('await tools.mark(); return 1', [binding], AbortSignal.abort());
    expect(failureOf(result, 'abort')).toMatch(/before it started/);
    expect(calls).toBe(0);
  });

  it('withdraws a queued program whose signal aborts, without running it', async () => {
    const gate = deferred();
    let marks = 0;
    const binding = tools({ hold: () => gate.promise.then(() => 'released'), mark: () => marks++ });
    const busy = run('return await tools.hold()', [binding]);
    const controller = new AbortController();
    const queued = run('await tools.mark(); return 1', [binding], controller.signal);
    controller.abort();
    expect(failureOf(await queued, 'abort')).toMatch(/before it started/);
    gate.resolve();
    expect(await busy).toEqual({ value: 'released', logs: [] });
    expect(marks).toBe(0);
  });

  it('ignores a signal that aborts after the run ended', async () => {
    const controller = new AbortController();
    expect(await run('return 1', [], controller.signal)).toEqual({ value: 1, logs: [] });
    controller.abort();
  });
});

describe("'invalid-output'", () => {
  it.each([
    ['a function', 'return () => 1', /a function has no JSON form/],
    ['a BigInt', 'return 10n', /a bigint has no JSON form/],
    ['a cycle', 'const a: any = {}; a.self = a; return a', /circular/],
    ['NaN', 'return NaN', /the number NaN, has no JSON form/],
    ['Infinity', 'return [1 / 0]', /the number at key "0", Infinity, has no JSON form/],
    ['a symbol', 'return Symbol("s")', /a symbol has no JSON form/],
    ['a nested function', 'return { ok: 1, f: () => 1 }', /a function \(at key "f"\) has no JSON form/],
  ])('rejects %s as a return value', async (_what, program, pattern) => {
    const result = await run(`console.log("kept"); ${program}`);
    const message = failureOf(result, 'invalid-output');
    expect(message).toMatch(pattern);
    expect(message).toMatch(/Return plain data/);
    expect(result.logs).toEqual(['kept']);
  });
});

describe("'output-limit'", () => {
  let limited: CodeRuntime;
  beforeAll(() => {
    limited = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, maxLogChars: 100, maxValueChars: 50, poolSize: 1 });
  });
  afterAll(() => limited.close());
  afterEach(() => expectHealthy(limited));

  it('stops a program whose console output passes the limit, keeping the output up to it', async () => {
    // Stopped by the output limit: the time limit is far away.
    const result = await limited.run({ program: 'for (let i = 0; ; i++) console.log("line " + i)', bindings: [] });
    expect(failureOf(result, 'output-limit')).toMatch(/passed the limit of 100 characters/);
    expect(result.logs.join('\n')).toBe(Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n').slice(0, 100));
  });

  it('counts each line, even an empty one', async () => {
    const result = await limited.run({ program: 'for (;;) console.log()', bindings: [] });
    failureOf(result, 'output-limit');
    expect(result.logs.length).toBeLessThanOrEqual(101);
  });

  it('cuts one long line at the limit', async () => {
    const result = await limited.run({ program: 'console.log("x".repeat(1e7)); return 1', bindings: [] });
    failureOf(result, 'output-limit');
    expect(result.logs).toEqual(['x'.repeat(100)]);
  });

  it('accepts output exactly at the limit, lines joined by newlines', async () => {
    expect(await limited.run({ program: 'console.log("a".repeat(49)); console.log("b".repeat(50)); return 1', bindings: [] })).toEqual({
      value: 1,
      logs: ['a'.repeat(49), 'b'.repeat(50)],
    });
    const over = await limited.run({ program: 'console.log("a".repeat(50)); console.log("b".repeat(50)); return 1', bindings: [] });
    failureOf(over, 'output-limit');
    expect(over.logs.join('\n')).toHaveLength(100);
  });

  it('rejects a value whose JSON passes the limit', async () => {
    expect(await limited.run({ program: 'return "x".repeat(48)', bindings: [] })).toEqual({ value: 'x'.repeat(48), logs: [] });
    const result = await limited.run({ program: 'console.log("kept"); return "x".repeat(49)', bindings: [] });
    expect(failureOf(result, 'output-limit')).toMatch(/longer than 50 characters/);
    expect(result.logs).toEqual(['kept']);
  });
});
