import { describe, expect, it } from 'vitest';
import { Later, thenOrNow } from '../../src/util/later.js';

describe('Later', () => {
  it('calls back synchronously when it settles, and at once when it has', () => {
    const later = new Later<number>();
    const seen: string[] = [];
    later.then((v) => seen.push(`a${v}`));
    seen.push('before');
    later.resolve(1);
    seen.push('after');
    later.then((v) => seen.push(`b${v}`));
    expect(seen).toEqual(['before', 'a1', 'after', 'b1']);
  });

  it('settles once: a later resolve or reject is ignored', () => {
    const later = new Later<number>();
    later.resolve(1);
    later.resolve(2);
    later.reject(new Error('no'));
    let seen: unknown;
    later.then((v) => (seen = v));
    expect(seen).toBe(1);
  });

  it('adopts a Later synchronously, and is locked while it follows one', () => {
    const inner = new Later<number>();
    const outer = new Later<number>();
    outer.resolve(inner);
    outer.resolve(5); // locked: ignored
    let seen: unknown;
    outer.then((v) => (seen = v));
    expect(seen).toBeUndefined();
    inner.resolve(7);
    expect(seen).toBe(7);
  });

  it('adopts a native promise when it settles', async () => {
    const later = Later.from(Promise.resolve(3));
    expect(later.settled).toBe(false);
    await expect(later).resolves.toBe(3);
  });

  it('a callback that throws rejects the derived Later, never the settler', () => {
    const later = new Later<number>();
    const boom = new Error('boom');
    const derived = later.then(() => {
      throw boom;
    });
    expect(() => later.resolve(1)).not.toThrow();
    let caught: unknown;
    derived.then(undefined, (e) => (caught = e));
    expect(caught).toBe(boom);
  });

  it('passes a rejection through a then without an error callback', () => {
    const boom = new Error('boom');
    let caught: unknown;
    Later.rejected(boom)
      .then((v) => v)
      .then(undefined, (e) => (caught = e));
    expect(caught).toBe(boom);
  });

  it('refuses to resolve to itself', () => {
    const later = new Later<unknown>();
    later.resolve(later);
    let caught: unknown;
    later.then(undefined, (e) => (caught = e));
    expect(caught).toBeInstanceOf(TypeError);
  });

  it('takes a foreign thenable’s first word only, even if it then throws', () => {
    const thenable = {
      then(ok: (v: number) => void, fail: (e: unknown) => void) {
        ok(1);
        ok(2);
        fail(new Error('late'));
        throw new Error('later still');
      },
    };
    let seen: unknown;
    Later.from(thenable as unknown as PromiseLike<number>).then((v) => (seen = v));
    expect(seen).toBe(1);
  });

  it('thenOrNow stays synchronous for values and settled Laters', () => {
    expect(thenOrNow(1, (v) => v + 1)).toBe(2);
    const settled = Later.from(1);
    const result = thenOrNow(settled, (v) => v + 1);
    expect(result).toBeInstanceOf(Later);
    let seen: unknown;
    (result as Later<number>).then((v) => (seen = v));
    expect(seen).toBe(2);
  });
});
