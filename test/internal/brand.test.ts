import { describe, expect, it } from 'vitest';
import { brand } from '../../src/util/brand.js';

/** Two copies of "the same" class, as the ESM and the CJS build each define their own. */
const copy = () =>
  class Marked extends Error {
    static {
      brand(this, 'test.Marked');
    }
  };

describe('brand: instanceof across copies of a class', () => {
  it('holds across copies, both ways, and not for other values', () => {
    const [A, B] = [copy(), copy()];
    expect(A).not.toBe(B);
    expect(new A() instanceof B).toBe(true);
    expect(new B() instanceof A).toBe(true);
    for (const other of [new Error('x'), {}, null, undefined, 'Marked', 42, () => undefined]) expect(other instanceof A).toBe(false);
  });

  it('keeps ordinary semantics for a subclass', () => {
    const A = copy();
    class Sub extends A {}
    expect(new Sub() instanceof A).toBe(true);
    expect(new A() instanceof Sub).toBe(false);
    expect(new Sub() instanceof Sub).toBe(true);
  });

  it('never throws, even for a Proxy whose traps throw', () => {
    const A = copy();
    const trap = () => {
      throw new Error('trap');
    };
    const hostile = new Proxy({}, { get: trap, getPrototypeOf: trap, has: trap });
    expect(hostile instanceof A).toBe(false);
  });
});
