import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/util/errors.js';
import { createQuickJSRuntime, type QuickJSRuntimeOptions } from '../../../src/ptc/quickjs/createQuickJSRuntime.js';
import type { CodeRunRequest } from '../../../src/ptc/types.js';
import { MiB } from './helpers.js';

function configError(create: () => unknown): ConfigError {
  try {
    create();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('no ConfigError was thrown');
}

describe('createQuickJSRuntime options', () => {
  it.each<[keyof QuickJSRuntimeOptions, unknown]>([
    ['timeoutMs', 0],
    ['timeoutMs', -1],
    ['timeoutMs', Number.NaN],
    ['timeoutMs', Infinity],
    ['timeoutMs', 2 ** 31],
    ['timeoutMs', '1000'],
    ['memoryLimitBytes', 1],
    ['memoryLimitBytes', 32 * MiB - 1],
    ['memoryLimitBytes', 2048 * MiB + 1],
    ['memoryLimitBytes', 32 * MiB + 0.5],
    ['maxLogChars', -1],
    ['maxLogChars', 1.5],
    ['maxLogChars', Number.NaN],
    ['maxValueChars', 0],
    ['maxValueChars', -Infinity],
    ['maxArgsChars', 0],
    ['maxArgsChars', 2.5],
    ['maxPendingArgsChars', 0],
    ['maxPendingArgsChars', 999_999],
    ['poolSize', 0],
    ['poolSize', 65],
    ['poolSize', 1.5],
    ['resourceLimits', null],
    ['resourceLimits', 'small'],
  ])('rejects %s: %s', (option, value) => {
    const error = configError(() => createQuickJSRuntime({ [option]: value } as QuickJSRuntimeOptions));
    expect(error.where).toBe('createQuickJSRuntime');
    expect(error.option).toBe(option);
    expect(error.code).toBe('invalid_config');
  });

  it('names maxArgsChars in what maxPendingArgsChars must be', () => {
    const error = configError(() => createQuickJSRuntime({ maxArgsChars: 5_000, maxPendingArgsChars: 4_999 }));
    expect(error.message).toContain('at least maxArgsChars (5000)');
  });

  it('accepts the bounds', async () => {
    const runtimes = [
      createQuickJSRuntime(),
      createQuickJSRuntime({ timeoutMs: 1, memoryLimitBytes: 32 * MiB, maxLogChars: 0, maxValueChars: 1, maxArgsChars: 1, maxPendingArgsChars: 1, poolSize: 1 }),
      createQuickJSRuntime({
        timeoutMs: 2 ** 31 - 1,
        memoryLimitBytes: 2048 * MiB,
        maxLogChars: Infinity,
        maxValueChars: Infinity,
        maxArgsChars: Infinity,
        maxPendingArgsChars: Infinity,
        poolSize: 64,
        resourceLimits: {},
      }),
      // A larger maxArgsChars raises the default of maxPendingArgsChars with it.
      createQuickJSRuntime({ maxArgsChars: 20_000_000 }),
    ];
    await Promise.all(runtimes.map((runtime) => runtime.close()));
  });
});

describe('run requests', () => {
  const runtime = createQuickJSRuntime({ timeoutMs: 1000 });
  afterAll(() => runtime.close());
  const fn = () => 1;

  it.each<[string, unknown, string]>([
    ['no request', null, 'request'],
    ['a program that is not a string', { program: 42, bindings: [] }, 'program'],
    ['a signal that is not an AbortSignal', { program: '', bindings: [], signal: {} }, 'signal'],
    ['bindings that are not an array', { program: '', bindings: {} }, 'bindings'],
    ['a binding that is not an object', { program: '', bindings: [null] }, 'bindings[0]'],
    ['an empty global', { program: '', bindings: [{ global: '', functions: {} }] }, 'bindings[0].global'],
    ['a global named console', { program: '', bindings: [{ global: 'console', functions: { log: fn } }] }, 'bindings[0].global'],
    ['a global named ToolCallError', { program: '', bindings: [{ global: 'ToolCallError', functions: {} }] }, 'bindings[0].global'],
    ['a global named globalThis', { program: '', bindings: [{ global: 'globalThis', functions: {} }] }, 'bindings[0].global'],
    ['a global that is not a string', { program: '', bindings: [{ global: 1, functions: {} }] }, 'bindings[0].global'],
    [
      'a duplicate global',
      { program: '', bindings: [{ global: 'tools', functions: { a: fn } }, { global: 'tools', functions: { b: fn } }] },
      'bindings[1].global',
    ],
    ['functions that are not an object', { program: '', bindings: [{ global: 'tools', functions: null }] }, 'bindings[0].functions'],
    ['a function that is not a function', { program: '', bindings: [{ global: 'tools', functions: { a: fn, b: 'nope' } }] }, 'bindings[0].functions["b"]'],
  ])('throws for %s', (_what, request, option) => {
    const error = configError(() => runtime.run(request as CodeRunRequest));
    expect(error.where).toBe('run');
    expect(error.option).toBe(option);
  });

  it('throws synchronously, before anything runs', () => {
    expect(() => runtime.run({ program: '', bindings: [{ global: 'console', functions: {} }] })).toThrow(ConfigError);
  });
});
