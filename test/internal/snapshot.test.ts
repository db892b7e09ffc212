import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { snapshotValue } from '../../src/util/snapshot.js';

/** An object nested `depth` levels deep: { a: { a: … { leaf } } }. */
function nested(depth: number, leaf: unknown): Record<string, unknown> {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value as Record<string, unknown>;
}

describe('snapshotValue', () => {
  it('detects a cycle at any depth, shallow or deep', () => {
    for (const depth of [0, 1, 31, 32, 33, 200]) {
      const root: Record<string, unknown> = {};
      let inner = root;
      for (let i = 0; i < depth; i++) inner = (inner['a'] = {}) as Record<string, unknown>;
      inner['back'] = root;
      expect(() => snapshotValue(root), `cycle at depth ${depth}`).toThrow(/cycle/);
    }
  });

  it('copies a value shared without a cycle (a DAG), at any depth, as JSON.stringify does', () => {
    for (const depth of [1, 40]) {
      const shared = { x: [1, 2] };
      const value = nested(depth, { left: shared, right: shared, list: [shared, shared] });
      const copy = snapshotValue(value);
      expect(copy).toEqual(JSON.parse(JSON.stringify(value)));
      expect(Object.isFrozen(copy)).toBe(true);
    }
  });

  it('equals JSON.parse(JSON.stringify(value)) for any JSON value, deep ones too', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 60 }), (json, depth) => {
        const value = nested(depth, json);
        expect(snapshotValue(value)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 200 },
    );
  });

  it('reads own enumerable keys only, as JSON.stringify does', () => {
    const proto = { inherited: 1 };
    const value = Object.create(proto) as Record<string, unknown>;
    value['own'] = 2;
    Object.defineProperty(value, 'hidden', { value: 3, enumerable: false });
    expect(snapshotValue({ v: value })).toEqual({ v: { own: 2 } });
  });

  it('forgets a failed copy: a cycle or a throwing getter leaves nothing behind for the next copy', () => {
    const shared = { x: 1 };
    const cyclic: Record<string, unknown> = { shared };
    cyclic['self'] = cyclic;
    expect(() => snapshotValue(cyclic)).toThrow(/cycle/);
    const hostile = { shared, get boom(): never { throw new Error('getter'); } };
    expect(() => snapshotValue(hostile)).toThrow(/getter/);
    // `shared` was on the path of both failed copies: a copy that looked below its own start would see it.
    expect(snapshotValue({ shared, again: shared })).toEqual({ shared: { x: 1 }, again: { x: 1 } });
  });

  it('lets a toJSON snapshot a value of its own, even one on the outer copy\'s path', () => {
    const outer: Record<string, unknown> = { n: 1 };
    outer['inner'] = { toJSON: () => snapshotValue({ copyOfOuter: { n: outer['n'] } }) };
    expect(snapshotValue(outer)).toEqual({ n: 1, inner: { copyOfOuter: { n: 1 } } });
    // A nested copy of an object on the outer copy's path: a copy of its own, not a cycle of the outer one.
    const a: Record<string, unknown> = { n: 2 };
    let calls = 0;
    a['t'] = { toJSON: () => (calls++ === 0 ? snapshotValue({ inner: a }) : 'leaf') };
    expect(snapshotValue({ a })).toEqual({ a: { n: 2, t: { inner: { n: 2, t: 'leaf' } } } });
  });
});
