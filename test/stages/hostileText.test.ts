import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type PrePolicy } from '../../src/index.js';

const MB = 2 ** 20;
const echo = defineTool({ name: 'echo', description: 'e', input: z.strictObject({ text: z.string() }), mode: 'parallel', execute: ({ text }) => text });
const fails = defineTool({ name: 'fails', description: 'f', input: z.object({}), execute: () => { throw new Error('no'); } });

describe('messages built from what the model sent are bounded', () => {
  it('a 1 MB tool name gives a short unknown_tool message that still names the length', async () => {
    const [result] = await createPipeline({ tools: [echo] }).run([{ id: '1', name: 'x'.repeat(MB), args: {} }]);
    expect(result?.error?.code).toBe('unknown_tool');
    expect(result!.content.length).toBeLessThan(300);
    expect(result!.content).toContain(`(${MB} characters)`);
    expect(result!.content).toContain('Available tools: echo');
  });

  it('a 1 MB duplicate id, and the cancellations it causes, give short messages', async () => {
    const id = 'i'.repeat(MB);
    const results = await createPipeline({ tools: [echo, fails] }).run([
      { id, name: 'fails', args: {} },
      { id, name: 'echo', args: { text: 'a' } },
      { id: '3', name: 'echo', args: { text: 'b' } },
    ]);
    expect(results.map((r) => r.error?.code)).toEqual(['tool_error', 'duplicate_id', 'cancelled']);
    for (const result of results.slice(1)) expect(result.content.length).toBeLessThan(300);
  });

  it('thousands of unknown keys with long names, or thousands of issues, give a bounded invalid_args message', async () => {
    const keys = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`${i}${'k'.repeat(10_000)}`, 1]));
    const list = defineTool({ name: 'list', description: 'l', input: z.object({ list: z.array(z.number()) }), execute: () => 'x' });
    const [unknownKeys, manyIssues] = await createPipeline({ tools: [echo, list] }).run([
      { id: '1', name: 'echo', args: { text: 'a', ...keys } },
      { id: '2', name: 'list', args: { list: Array.from({ length: 2000 }, () => 'not a number') } },
    ]);
    expect(unknownKeys?.error?.code).toBe('invalid_args');
    expect(unknownKeys!.content.length).toBeLessThan(400);
    expect(manyIssues?.error?.code).toBe('invalid_args');
    expect(manyIssues!.content.length).toBeLessThan(21 * 300 + 100);
    expect(manyIssues!.content).toMatch(/- and 1980 more issues$/);
    expect(manyIssues?.error?.code === 'invalid_args' && manyIssues.error.issues.length).toBe(2000); // the host keeps them all
  });
});

describe('hostile argument objects', () => {
  it('a Proxy whose every trap throws is an invalid_json result, not a broken stream', async () => {
    const trap = () => {
      throw new Error('trap');
    };
    const args = new Proxy({}, { getPrototypeOf: trap, get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
    const results = await createPipeline({ tools: [echo] }).run([
      { id: '1', name: 'echo', args },
      { id: '2', name: 'echo', args: { text: 'after' } },
    ]);
    expect(results.map((r) => r.error?.code ?? r.content)).toEqual(['invalid_json', 'after']);
  });
});

describe('a policy that throws a hostile value is named', () => {
  it('a Proxy whose getPrototypeOf throws is a policy_error naming the policy, not a default denial', async () => {
    const hostile = new Proxy({}, {
      getPrototypeOf() {
        throw new Error('trap');
      },
      get() {
        throw new Error('trap');
      },
    });
    const thrower: PrePolicy = function thrower() {
      throw hostile;
    };
    const [result] = await createPipeline({ tools: [echo], pre: [thrower] }).run([{ id: '1', name: 'echo', args: { text: 'a' } }]);
    expect(result?.status).toBe('denied');
    expect(result?.error).toMatchObject({ code: 'policy_error', policy: 'thrower' });
  });
});
