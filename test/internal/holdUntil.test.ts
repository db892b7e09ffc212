import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { holdUntil } from '../../src/internal/holdUntil.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

function opened(): { ready: Promise<void>; open: () => void; fail: (error: unknown) => void } {
  let open!: () => void;
  let fail!: (error: unknown) => void;
  const ready = new Promise<void>((res, rej) => ((open = res), (fail = rej)));
  return { ready, open, fail };
}

function record(source: Subject<number>, ready: Promise<void>): string[] {
  const seen: string[] = [];
  source.pipe(holdUntil<number>(ready)).subscribe({
    next: (value) => seen.push(`next ${value}`),
    error: (error: unknown) => seen.push(`error ${String(error)}`),
    complete: () => seen.push('complete'),
  });
  return seen;
}

describe('holdUntil', () => {
  it('holds values and the completion until ready, then lets them through in order', async () => {
    const source = new Subject<number>();
    const gate = opened();
    const seen = record(source, gate.ready);
    source.next(1);
    source.next(2);
    source.complete();
    await tick();
    expect(seen).toEqual([]);
    gate.open();
    await tick();
    expect(seen).toEqual(['next 1', 'next 2', 'complete']);
  });

  it('a source error is held too, behind the values', async () => {
    const source = new Subject<number>();
    const gate = opened();
    const seen = record(source, gate.ready);
    source.next(1);
    source.error('boom');
    gate.open();
    await tick();
    expect(seen).toEqual(['next 1', 'error boom']);
  });

  it('after ready, values and the end pass straight through', async () => {
    const source = new Subject<number>();
    const gate = opened();
    const seen = record(source, gate.ready);
    gate.open();
    await tick();
    source.next(1);
    source.complete();
    expect(seen).toEqual(['next 1', 'complete']);
  });

  it('a rejected ready errors at once, without waiting for the source, and drops what was held', async () => {
    const source = new Subject<number>();
    const gate = opened();
    const seen = record(source, gate.ready);
    source.next(1);
    gate.fail('no lease');
    await tick();
    expect(seen).toEqual(['error no lease']);
    source.complete();
    expect(seen).toEqual(['error no lease']);
  });
});
