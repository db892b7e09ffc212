import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as zm } from 'zod/mini';
import { z as z3 } from 'zod/v3';
import { ConfigError, createPipeline, defineTool } from '../src/index.js';

const ok = { name: 'ok', description: 'ok', input: z.object({}), execute: () => 1 };

describe('defineTool', () => {
  it('fills in defaults and freezes', () => {
    const tool = defineTool(ok);
    expect(tool.mode).toBe('exclusive');
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it('accepts zod/mini schemas', () => {
    expect(defineTool({ ...ok, input: zm.object({ a: zm.string() }) }).name).toBe('ok');
  });

  it.each([
    [{ ...ok, name: '' }, /defineTool: `name` must be 1-128 characters/],
    [{ ...ok, name: 'has space' }, /`name`.*received "has space"/],
    [{ ...ok, description: undefined }, /`description` must be a string; received undefined/],
    [{ ...ok, input: { parse() {} } }, /`input` must be a zod 4 schema; received an object/],
    // A real zod 3 schema (zod 4 ships zod 3 as zod/v3), as a project with zod 3 installed makes one.
    [{ ...ok, input: z3.object({ a: z3.string() }) }, /`input` must be a zod 4 schema, not a zod 3 one \(toolstream needs zod 4: `npm i zod@\^4.2`, then import z from 'zod'\); received an object/],
    [{ ...ok, mode: 'serial' }, /`mode` must be "parallel" or "exclusive"; received "serial"/],
    [{ ...ok, timeoutMs: 0 }, /`timeoutMs` must be 1 to 2147483647 milliseconds \(Node's longest timer\), or Infinity for no limit; received 0/],
    [{ ...ok, timeoutMs: 2 ** 31 }, /`timeoutMs`.*received 2147483648/], // Node would fire it after 1 ms
    [{ ...ok, timeoutMs: Number.NaN }, /`timeoutMs`.*received NaN/],
    [{ ...ok, onError: 'ignore' }, /`onError` must be "cancel-rest" or "continue"/],
    [{ ...ok, execute: 'code' }, /`execute` must be a function; received "code"/],
  ])('rejects %#: %s', (definition, message) => {
    expect(() => defineTool(definition as never)).toThrow(message);
    expect(() => defineTool(definition as never)).toThrow(ConfigError);
  });
});

describe('createPipeline options', () => {
  const tool = defineTool(ok);

  it.each([
    [{ tools: 'all' }, 'tools', /an array of tools made by defineTool; received "all"/],
    [{ tools: [ok] }, 'tools[0]', /a tool made by defineTool; received an object/],
    [{ tools: [tool, tool] }, 'tools[1].name', /unique among the tools; received "ok"/],
    [{ tools: [tool], concurrency: 0 }, 'concurrency', /a positive integer or Infinity; received 0/],
    [{ tools: [tool], concurrency: 2.5 }, 'concurrency', /received 2.5/],
    [{ tools: [tool], onError: 'stop' }, 'onError', /"cancel-rest" or "continue"; received "stop"/],
    [{ tools: [tool], defaultTimeoutMs: -1 }, 'defaultTimeoutMs', /1 to 2147483647 milliseconds, or Infinity for no limit; received -1/],
    [{ tools: [tool], approvalTimeoutMs: 2 ** 31 }, 'approvalTimeoutMs', /received 2147483648/],
    [{ tools: [tool], abortGraceMs: 2 ** 40 }, 'abortGraceMs', /or Infinity; received 1099511627776/],
    [{ tools: [tool], abortGraceMs: Number.NaN }, 'abortGraceMs', /received NaN/],
    [{ tools: [tool], scheduler: {} }, 'scheduler', /an RxJS SchedulerLike/],
  ])('rejects %#: %s', (options, option, message) => {
    let error: unknown;
    try {
      createPipeline(options as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).option).toBe(option);
    expect((error as ConfigError).code).toBe('invalid_config');
    expect((error as ConfigError).message).toMatch(message);
  });

  it('accepts Infinity concurrency and an empty tool list', () => {
    expect(createPipeline({ tools: [], concurrency: Infinity }).tools).toEqual([]);
  });

  it('rejects a run signal that is not an AbortSignal', () => {
    expect(() => createPipeline({ tools: [tool] }).operator({ signal: {} as AbortSignal })).toThrow(/`signal` must be an AbortSignal/);
  });
});
