import { of, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { holdUntil } from '../../src/stream/holdUntil.js';
import { Later } from '../../src/util/later.js';
import { deferred } from '../support/deferred.js';
import { notifications } from '../support/notifications.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

const record = (source: Subject<number>, ready: Parameters<typeof holdUntil>[0]) => notifications(source.pipe(holdUntil<number>(ready)));

describe('holdUntil', () => {
  it('holds values and the completion until ready, then lets them through in order', async () => {
    const source = new Subject<number>();
    const gate = deferred();
    const seen = record(source, gate.promise);
    source.next(1);
    source.next(2);
    source.complete();
    await tick();
    expect(seen).toEqual([]);
    gate.resolve();
    await tick();
    expect(seen).toEqual(['next 1', 'next 2', 'complete']);
  });

  it('a source error is held too, behind the values', async () => {
    const source = new Subject<number>();
    const gate = deferred();
    const seen = record(source, gate.promise);
    source.next(1);
    source.error('boom');
    gate.resolve();
    await tick();
    expect(seen).toEqual(['next 1', 'error boom']);
  });

  it('after ready, values and the end pass straight through', async () => {
    const source = new Subject<number>();
    const gate = deferred();
    const seen = record(source, gate.promise);
    gate.resolve();
    await tick();
    source.next(1);
    source.complete();
    expect(seen).toEqual(['next 1', 'complete']);
  });

  it('a rejected ready errors at once, without waiting for the source, and drops what was held', async () => {
    const source = new Subject<number>();
    const gate = deferred();
    const seen = record(source, gate.promise);
    source.next(1);
    gate.reject('no lease');
    await tick();
    expect(seen).toEqual(['error no lease']);
    source.complete();
    expect(seen).toEqual(['error no lease']);
  });

  it('ready already (not a thenable): the source passes straight through, as it is', () => {
    const source = of(1, 2);
    expect(source.pipe(holdUntil<number>(undefined))).toBe(source);
    expect(notifications(source.pipe(holdUntil<number>(undefined)))).toEqual(['next 1', 'next 2', 'complete']);
  });

  it('a Later that has resolved lets everything through synchronously', () => {
    expect(notifications(of(1, 2).pipe(holdUntil<number>(Later.from(undefined))))).toEqual(['next 1', 'next 2', 'complete']);
  });

  it('a Later that has rejected errors at once and never subscribes to the source', () => {
    const source = new Subject<number>();
    const seen = notifications(source.pipe(holdUntil<number>(Later.rejected('no lease'))));
    expect(seen).toEqual(['error no lease']);
    expect(source.observed).toBe(false);
  });

  it('a pending Later releases what it held the moment it resolves, without a tick', () => {
    const source = new Subject<number>();
    const ready = new Later<void>();
    const seen = record(source, ready);
    source.next(1);
    expect(seen).toEqual([]);
    ready.resolve();
    expect(seen).toEqual(['next 1']);
    source.next(2);
    source.complete();
    expect(seen).toEqual(['next 1', 'next 2', 'complete']);
  });
});
