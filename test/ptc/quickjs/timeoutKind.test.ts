import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import type { CodeRuntime } from '../../../src/ptc/types.js';
import { expectHealthy, failureOf } from './helpers.js';

// A program stopped at its time limit is a `timeout`, even when the host stopped it while describing
// what it threw or returned: the getters and `toString` the description runs are the program's code,
// and the kind is decided after they ran.

const TIMEOUT_MS = 300;

let runtime: CodeRuntime;
beforeAll(() => {
  runtime = createQuickJSRuntime({ timeoutMs: TIMEOUT_MS, poolSize: 1 });
});
afterAll(() => runtime.close());
afterEach(() => expectHealthy(runtime));

const timeoutMessage = `The program ran past its time limit of ${TIMEOUT_MS} ms and was stopped. Do less per program, or make fewer tool calls one after another.`;

describe('a program stopped at its time limit while its thrown value is described is a timeout', () => {
  it.each([
    ['an object whose `message` getter loops', 'throw { name: "E", get message() { for (;;) {} } }'],
    ['an Error whose `name` getter loops', 'const e = new Error("x"); Object.defineProperty(e, "name", { get() { for (;;) {} } }); throw e'],
    ['a rejection with an Error whose `stack` getter loops', 'const e = new Error("x"); Object.defineProperty(e, "stack", { get() { for (;;) {} } }); await Promise.reject(e)'],
    ['a value whose `toString` loops', 'throw { toJSON() { for (;;) {} }, toString() { for (;;) {} } }'],
  ])('%s', async (_name, program) => {
    const result = await runtime.run({ program, bindings: [] });
    expect(failureOf(result, 'timeout')).toBe(timeoutMessage);
  });

  it('a return value whose toJSON loops (the value, not a throw): a timeout too', async () => {
    expect(failureOf(await runtime.run({ program: 'return { toJSON() { for (;;) {} } }', bindings: [] }), 'timeout')).toBe(timeoutMessage);
  });

  it('a getter that throws at once is still an exception, described as far as it goes', async () => {
    const program = 'throw { name: "E", get message() { throw new Error("no") } }';
    expect(failureOf(await runtime.run({ program, bindings: [] }), 'exception')).toMatch(/could not be described|cannot be described/);
  });
});
