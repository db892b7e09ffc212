import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from '../../src/index.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

const tools = [
  defineTool({
    name: 'echo',
    description: 'echo',
    input: z.object({ text: z.string().max(10_000), n: z.number().int().optional() }),
    mode: 'parallel',
    execute: ({ text }) => text,
  }),
  defineTool({ name: 'free', description: 'any args', input: z.unknown(), mode: 'parallel', execute: (args) => args }),
  defineTool({ name: 'strict', description: 'strict', input: z.strictObject({ a: z.array(z.number()) }), execute: ({ a }) => a.length }),
];

const names = fc.oneof(
  fc.constantFrom('echo', 'free', 'strict', '__proto__', 'constructor', 'toString', 'hasOwnProperty', ''),
  fc.string(),
  fc.anything(),
);
const args = fc.oneof(
  fc.jsonValue(),
  fc.json(),
  fc.string(),
  fc.anything(),
  fc.constantFrom('{', '{"text":', '[]', 'null', '   ', '{"__proto__":{"text":"x"}}', '{"text":"a","constructor":1}'),
  fc.record({ text: fc.string(), n: fc.oneof(fc.integer(), fc.double(), fc.string()) }, { requiredKeys: [] }),
);
const call = fc.oneof(
  { weight: 6, arbitrary: fc.record({ id: fc.oneof(fc.string(), fc.anything()), name: names, args }) },
  { weight: 1, arbitrary: fc.anything() },
);

describe('invariant 7: nothing the model sends crashes the stream', () => {
  it('any JSON, any name, any shape: one result per call, in order, and the promise resolves', async () => {
    const pipeline = createPipeline({ tools, onError: 'continue' });
    await fc.assert(
      fc.asyncProperty(fc.array(call, { maxLength: 20 }), async (calls) => {
        const results = await pipeline.run(calls as ToolCall[]);
        expect(results.map((r) => r.index)).toEqual(calls.map((_, i) => i));
        for (const result of results) {
          expect(Object.isFrozen(result)).toBe(true);
          expect(typeof result.content).toBe('string');
          if (result.status !== 'ok') expect(typeof result.error.code).toBe('string');
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('arguments of any size are validated, not trusted', async () => {
    const pipeline = createPipeline({ tools });
    const huge = 'x'.repeat(2_000_000);
    const [tooLong, fine, deep] = await pipeline.run([
      { id: 'a', name: 'echo', args: JSON.stringify({ text: huge }) },
      { id: 'b', name: 'echo', args: { text: 'short' } },
      { id: 'c', name: 'free', args: '['.repeat(100_000) + ']'.repeat(100_000) },
    ]);
    expect(tooLong!.error?.code).toBe('invalid_args');
    expect(fine!.status).toBe('ok');
    expect(['ok', 'error']).toContain(deep!.status); // parsed or rejected, never a crash
  });
});
