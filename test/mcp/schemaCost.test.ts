import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundCost } from '../../src/mcp/schemaCost.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

type Schema = Record<string, unknown>;

/**
 * The schema evaluations each value of `value` gets, counted the way zod applies a JSON Schema:
 * every `$ref` target and every member of `anyOf`, `oneOf` and `allOf` on the same value (all of them,
 * as when each fails), `properties`, `additionalProperties` and `items` on the children. Throws past
 * `cap` evaluations, so an endless recursion fails the test rather than hanging it.
 */
function countEvaluations(root: Schema, value: unknown, cap = 100_000): Map<unknown, number> {
  const counts = new Map<unknown, number>();
  let total = 0;
  const resolve = (ref: string): Schema | undefined =>
    ref === '#' ? root : ((root['$defs'] as Record<string, Schema> | undefined)?.[ref.replace('#/$defs/', '')] ?? undefined);
  const apply = (schema: unknown, node: { value: unknown }): void => {
    if (typeof schema !== 'object' || schema === null) return;
    if (++total > cap) throw new Error('evaluations without end');
    counts.set(node, (counts.get(node) ?? 0) + 1);
    const s = schema as Schema;
    if (typeof s['$ref'] === 'string') apply(resolve(s['$ref']), node);
    for (const keyword of ['anyOf', 'oneOf', 'allOf']) for (const member of (s[keyword] as unknown[] | undefined) ?? []) apply(member, node);
    const v = node.value;
    if (Array.isArray(v)) for (const item of children(node)) apply(s['items'], item);
    else if (typeof v === 'object' && v !== null) {
      const properties = (s['properties'] as Record<string, unknown> | undefined) ?? {};
      for (const [key, child] of childEntries(node)) apply(Object.hasOwn(properties, key) ? properties[key] : s['additionalProperties'], child);
    }
  };
  // Each value is wrapped once, so that equal primitives at different places count apart.
  const wrapped = new Map<unknown, { value: unknown }[]>();
  const entries = new Map<unknown, [string, { value: unknown }][]>();
  const wrap = (v: unknown): { value: unknown } => {
    const node = { value: v };
    if (Array.isArray(v)) wrapped.set(node, v.map(wrap));
    else if (typeof v === 'object' && v !== null) entries.set(node, Object.entries(v).map(([k, c]) => [k, wrap(c)]));
    return node;
  };
  const children = (node: { value: unknown }) => wrapped.get(node) ?? [];
  const childEntries = (node: { value: unknown }) => entries.get(node) ?? [];
  apply(root, wrap(value));
  return counts;
}

const { schema: schemaArb } = fc.letrec<{ schema: Schema }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Schema>({ type: 'string' }, {}, { $ref: '#' }, { $ref: '#/$defs/A' }, { $ref: '#/$defs/B' }),
    fc.record({ type: fc.constant('object'), properties: fc.record({ a: tie('schema'), b: tie('schema') }, { requiredKeys: [] }) }),
    fc.record({ type: fc.constant('object'), additionalProperties: tie('schema') }),
    fc.record({ type: fc.constant('array'), items: tie('schema') }),
    fc.record({ anyOf: fc.array(tie('schema'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ oneOf: fc.array(tie('schema'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ allOf: fc.array(tie('schema'), { minLength: 1, maxLength: 3 }) }),
  ),
}));
const rootArb = fc
  .tuple(schemaArb, schemaArb, schemaArb)
  .map(([root, a, b]): Schema => ({ ...root, $defs: { A: a, B: b } }));
const { value: valueArb } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom('s', 1, null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('value'), { maxKeys: 3 }),
  ),
}));

describe('boundCost', () => {
  it('property: after it, no value of the arguments gets more evaluations than the factor it reports, and that factor is within the bound', () => {
    fc.assert(
      fc.property(rootArb, fc.array(valueArb, { minLength: 1, maxLength: 4 }), (schema, values) => {
        const { factors } = boundCost(schema, { maxDepth: 8, maxFactor: 12 });
        expect(factors.evaluations).toBeLessThanOrEqual(12);
        for (const value of values) {
          for (const count of countEvaluations(schema, value).values()) expect(count).toBeLessThanOrEqual(factors.evaluations);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('drops a $ref that recurses on one value, and an anyOf chain over shared definitions, and nothing else', () => {
    const endless = { anyOf: [{ $ref: '#' }, { type: 'string' }] };
    expect(boundCost(endless, { maxDepth: 8, maxFactor: 12 }).dropped).toEqual(['/anyOf/0/$ref']);

    const $defs: Schema = { A3: { type: 'object', properties: { x: { type: 'string' } } } };
    for (let i = 0; i < 3; i++) $defs[`A${i}`] = { anyOf: [{ $ref: `#/$defs/A${i + 1}` }, { $ref: `#/$defs/A${i + 1}` }] };
    const chain = { $defs, type: 'object', properties: { v: { $ref: '#/$defs/A0' } } };
    const bounded = boundCost(chain, { maxDepth: 8, maxFactor: 12 });
    // A0 evaluates A3 eight times: 1 + 2 + 4 + 8 + 8 = 23 evaluations of `v` (and 8 of x) before.
    expect(bounded.dropped).toEqual(['/$defs/A0/anyOf']);
    expect(bounded.factors.evaluations).toBe(2); // `v` gets its $ref and A0

    const tree = { type: 'object', properties: { kids: { type: 'array', items: { anyOf: [{ type: 'string' }, { $ref: '#' }] } } } };
    expect(boundCost(tree, { maxDepth: 8, maxFactor: 12 })).toEqual({ dropped: [], factors: { evaluations: 4, patternSteps: 0 } });
  });
});
