import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJSRuntime } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import type { CodeRuntime } from '../../../src/ptc/types.js';
import { expectHealthy, failureOf, MiB, tools, UNREACHED_LIMIT_MS } from './helpers.js';

/*
 * Program-controlled text that crosses to the host in a failure is capped inside QuickJS. Before, a
 * thrown 50M-character string was copied out whole and JSON-encoded again in the worker, and a worker
 * heap of a few dozen MB made Node abort the whole process (not just the worker).
 */
let runtime: CodeRuntime;
beforeAll(() => {
  runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 1, memoryLimitBytes: 128 * MiB, maxValueChars: 1000, resourceLimits: { maxOldGenerationSizeMb: 32 } });
});
afterAll(() => runtime.close());

describe('hostile failures stay small', () => {
  it.each([
    ['a thrown huge string', "throw 'x'.repeat(50_000_000)"],
    ['an error with a huge message', "throw new Error('m'.repeat(50_000_000))"],
    ['a huge object thrown', "throw { text: 'o'.repeat(20_000_000) }"],
    ['an invalid value under a huge key', "return { ['k'.repeat(3_000_000)]: () => 1 }"],
  ])('%s: the failure text is capped and the host lives', async (_name, program) => {
    const result = await runtime.run({ program, bindings: [] });
    expect(result.failure?.kind).toMatch(/^(exception|invalid-output)$/);
    expect(result.failure!.message.length).toBeLessThan(2_000);
    await expectHealthy(runtime);
  });

  it('an error whose getters throw is still described', async () => {
    const program = "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw new Error('no'); } }); throw e";
    expect(failureOf(await runtime.run({ program, bindings: [] }), 'exception')).toMatch(/cannot be described|Error/);
  });
});

describe('host functions that fail strangely', () => {
  it.each([
    ['a null-prototype object', () => Promise.reject(Object.create(null))],
    ['an error whose getters throw', () => Promise.reject(Object.defineProperty(new Error('x'), 'message', { get: () => { throw new Error('getter'); } }))],
    ['a thrown symbol', () => { throw Symbol('s'); }],
  ])('%s rejects inside the program, and the host survives', async (_name, fn) => {
    const result = await runtime.run({ program: 'return await tools.bad({}).then(() => "resolved", (e) => e.name)', bindings: [tools({ bad: fn })] });
    expect(result).toEqual({ value: 'ToolCallError', logs: [] });
  });
});
