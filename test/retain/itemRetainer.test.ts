import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.js';
import { ItemRetainer } from '../../src/util/itemRetainer.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

function retain<T>(maxItems: number, items: readonly T[]): ItemRetainer<T> {
  const retainer = new ItemRetainer<T>(maxItems);
  for (const item of items) retainer.push(item);
  return retainer;
}

describe('ItemRetainer', () => {
  it('keeps the first maxItems items in order and counts the rest', () => {
    const r = retain(2, ['a', 'b', 'c', 'd']);
    expect(r.kept).toEqual(['a', 'b']);
    expect(r.omitted).toBe(2);
    expect(r.total).toBe(4);
  });

  it('keeps everything when the stream is within the limit', () => {
    const r = retain(3, [1, 2]);
    expect(r.kept).toEqual([1, 2]);
    expect([r.omitted, r.total]).toEqual([0, 2]);
  });

  it('starts empty', () => {
    const r = new ItemRetainer<number>(5);
    expect(r.kept).toEqual([]);
    expect([r.omitted, r.total]).toEqual([0, 0]);
  });

  it('with maxItems 0 keeps nothing and counts everything', () => {
    const r = retain(0, [1, 2, 3]);
    expect(r.kept).toEqual([]);
    expect([r.omitted, r.total]).toEqual([3, 3]);
  });

  it('with maxItems Infinity keeps everything', () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    const r = retain(Infinity, items);
    expect(r.kept).toEqual(items);
    expect(r.omitted).toBe(0);
  });

  it('keeps items by reference, including undefined and duplicates', () => {
    const obj = { a: 1 };
    const r = retain(3, [obj, undefined, obj, obj]);
    expect(r.kept[0]).toBe(obj);
    expect(r.kept).toEqual([obj, undefined, obj]);
    expect(r.omitted).toBe(1);
  });

  it('reads kept without copying: the same array each time', () => {
    const r = retain(2, [1, 2, 3]);
    expect(r.kept).toBe(r.kept);
  });

  it('exposes maxItems', () => {
    expect(new ItemRetainer(7).maxItems).toBe(7);
  });

  it.each([
    [-1, '-1'],
    [1.5, '1.5'],
    [Number.NaN, 'NaN'],
    [-Infinity, '-Infinity'],
    ['3', '"3"'],
    [undefined, 'undefined'],
    [null, 'null'],
  ])('rejects maxItems %s with a ConfigError that says what was given', (maxItems, shown) => {
    const build = () => new ItemRetainer(maxItems as number);
    expect(build).toThrow(TypeError); // a ConfigError is a TypeError still
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(expect.objectContaining({ code: 'invalid_config', where: 'ItemRetainer', option: 'maxItems' }));
    expect(build).toThrow(`ItemRetainer: \`maxItems\` must be a non-negative integer or Infinity; received ${shown}`);
  });

  it('property: kept is the first min(N, maxItems) items; kept.length + omitted === total === N', () => {
    fc.assert(
      fc.property(fc.array(fc.anything()), fc.oneof(fc.nat(60), fc.constant(Infinity)), (items, maxItems) => {
        const r = retain(maxItems, items);
        const keptCount = Math.min(items.length, maxItems);
        expect(r.kept).toHaveLength(keptCount);
        r.kept.forEach((item, i) => expect(item).toBe(items[i]));
        expect(r.omitted).toBe(items.length - keptCount);
        expect(r.kept.length + r.omitted).toBe(r.total);
        expect(r.total).toBe(items.length);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
