import { of, Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { reorderByIndex } from '../../src/index.js';

const item = (index: number) => ({ index });
const values = { 0: item(0), 1: item(1), 2: item(2), 3: item(3) };

describe('reorderByIndex', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  it('releases each item as soon as every earlier one is out', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--2--0--1----3-|', values);
      expectObservable(source.pipe(reorderByIndex())).toBe('-----0--(12)-3-|', values);
      expectSubscriptions(source.subscriptions).toBe('^--------------!');
    });
  });

  it('passes an ordered stream straight through', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('0-1-2|', values).pipe(reorderByIndex())).toBe('0-1-2|', values);
    });
  });

  it('empty completes; never never emits', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold<{ index: number }>('|').pipe(reorderByIndex())).toBe('|');
      expectObservable(cold<{ index: number }>('-').pipe(reorderByIndex())).toBe('-');
    });
  });

  it('forwards a source error', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('0-#', values).pipe(reorderByIndex())).toBe('0-#', values);
    });
  });

  it('errors when an index never arrived: a broken invariant is not hidden', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const error = new Error('reorderByIndex: index 1 never arrived; 1 item(s) held back');
      expectObservable(cold('0-2|', values).pipe(reorderByIndex())).toBe('0--#', values, error);
    });
  });

  it('unsubscribes from the source when the consumer does', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('1-0-3-2-|', values);
      expectObservable(source.pipe(reorderByIndex()), '^----!').toBe('--(01)', values);
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
  });

  it('keeps state per subscription', () => {
    const reorder = reorderByIndex<{ index: number }>();
    const seen: number[] = [];
    of(item(1), item(0)).pipe(reorder).subscribe((x) => seen.push(x.index));
    of(item(1), item(0)).pipe(reorder).subscribe((x) => seen.push(x.index));
    expect(seen).toEqual([0, 1, 0, 1]);
  });
});

it('a consumer that completes the source while an item is released still gets every held item first', () => {
  const source = new Subject<{ index: number }>();
  const seen: string[] = [];
  source.pipe(reorderByIndex()).subscribe({
    next: (item) => {
      seen.push(`item ${item.index}`);
      if (item.index === 0) source.complete(); // re-entrant: item 1 is still held back
    },
    error: (error: Error) => seen.push(`error ${error.message}`),
    complete: () => seen.push('complete'),
  });
  source.next(item(1));
  source.next(item(0));
  expect(seen).toEqual(['item 0', 'item 1', 'complete']);
});
