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

const hostileStrings = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.constantFrom('\u0000', '\u2028\u2029', '\uD800', '\uFFFF', '💥'.repeat(50), ' '.repeat(1000)),
);
const pollution = fc.constantFrom(
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"text":"x","__proto__":{"polluted":"yes"}}',
  '{"a":[1],"__proto__":{"polluted":"yes"}}',
);
const deep = fc.integer({ min: 1, max: 5000 }).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));

describe('invariant 7: nothing the model sends crashes the stream', () => {
  it('hostile strings, prototype keys, deep nesting, empty and duplicate ids: a result each, and no prototype polluted', async () => {
    const loose = defineTool({ name: 'loose', description: 'l', input: z.looseObject({}), mode: 'parallel', execute: (args) => args });
    const pipeline = createPipeline({ tools: [...tools, loose], onError: 'continue' });
    const ids = fc.oneof(fc.constantFrom('', 'same', '__proto__', 'constructor'), hostileStrings);
    const names = fc.oneof(fc.constantFrom('echo', 'free', 'strict', 'loose', '__proto__', 'constructor', 'toString', 'valueOf'), hostileStrings);
    const args = fc.oneof(hostileStrings, pollution, deep, fc.jsonValue().map((v) => JSON.stringify(v)));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ id: ids, name: names, args }), { maxLength: 12 }), async (calls) => {
        const results = await pipeline.run(calls);
        expect(results.map((r) => r.index)).toEqual(calls.map((_, i) => i));
        const seen = new Set<string>();
        for (const [i, result] of results.entries()) {
          const { id } = calls[i]!;
          if (id === '') expect(result.error?.code).toBe('invalid_call');
          else if (seen.has(id)) expect(result.error?.code).toBe('duplicate_id');
          if (id !== '') seen.add(id);
          expect(typeof result.content).toBe('string');
        }
        expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
        expect(Object.prototype).not.toHaveProperty('polluted');
      }),
      { numRuns: NUM_RUNS },
    );
  });


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
