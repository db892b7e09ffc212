import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createPipeline, implementTool, isToolContract, toolContract } from '../src/index.js';

describe('toolContract and implementTool', () => {
  const contract = toolContract({ name: 'lookup', description: 'Look a key up', input: z.object({ key: z.string() }), mode: 'parallel', timeoutMs: 1_000, idempotent: true });

  it('a contract holds the facts, checked and defaulted like a tool, and no body', () => {
    expect(contract).toMatchObject({ name: 'lookup', mode: 'parallel', timeoutMs: 1_000, idempotent: true, onError: undefined });
    expect(Object.isFrozen(contract)).toBe(true);
    expect('execute' in contract).toBe(false);
    expect(isToolContract(contract)).toBe(true);
    expect(isToolContract({ ...contract })).toBe(true); // the mark is a registered symbol: it survives a copy
    expect(toolContract({ name: 'w', description: 'w', input: z.object({}) })).toMatchObject({ mode: 'exclusive', idempotent: false });
  });

  it('rejects what defineTool rejects, naming toolContract', () => {
    expect(() => toolContract({ name: 'bad name', description: 'x', input: z.object({}) })).toThrow(/^toolContract: `name`/);
    expect(() => toolContract({ name: 'x', description: 'x', input: z.object({}), timeoutMs: -1 })).toThrow(ConfigError);
    expect(() => toolContract({ name: 'x', description: 'x', input: {} as never })).toThrow(/`input` must be a zod 4 schema/);
    expect(() => toolContract({ name: 'x', description: 'x', input: z.object({}), render: 'no' as never })).toThrow(/`render`/);
  });

  it('implementTool gives the contract a body with the contract facts, runnable in a pipeline', async () => {
    const tool = implementTool(contract, ({ key }) => key.toUpperCase());
    expect(tool).toMatchObject({ name: 'lookup', mode: 'parallel', timeoutMs: 1_000, idempotent: true });
    const [result] = await createPipeline({ tools: [tool] }).run([{ id: 'a', name: 'lookup', args: { key: 'k' } }]);
    expect(result).toMatchObject({ status: 'ok', value: 'K' });
  });

  it('implementTool refuses what is not a contract', () => {
    expect(() => implementTool({ name: 'x' } as never, () => 1)).toThrow(/^implementTool: `contract`/);
    expect(() => implementTool(contract, 'no' as never)).toThrow(/^implementTool: `execute`/);
  });
});
