import { firstValueFrom, from, isObservable, map, retry } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ChainAnswer } from '../../src/stream/chainAnswer.js';
import { Later } from '../../src/util/later.js';

/** A chain's rest that counts its runs: `run()` runs it once, as `next()` does. */
function counted<T>(settle: (later: Later<T>) => void) {
  let runs = 0;
  const later = new Later<T>();
  return {
    run: () => {
      runs++;
      settle(later);
      return later;
    },
    later,
    runs: () => runs,
  };
}

describe('ChainAnswer (what next() gives)', () => {
  it('is an Observable and awaitable, and from() gives the same object', async () => {
    const answer = new ChainAnswer(1);
    expect(isObservable(answer)).toBe(true);
    expect(from(answer)).toBe(answer);
    expect(answer instanceof Promise).toBe(false);
    await expect(answer).resolves.toBe(1);
  });

  it('awaiting it and subscribing to it, or subscribing twice, never runs the rest again', async () => {
    const rest = counted<number>(() => undefined);
    const answer = new ChainAnswer(rest.run());
    const seen: number[] = [];
    answer.subscribe((v) => seen.push(v));
    answer.pipe(map((v) => v * 10)).subscribe((v) => seen.push(v));
    const awaited = answer.then((v) => v + 100);
    rest.later.resolve(2);
    expect(seen).toEqual([2, 20]); // delivered synchronously when the rest settled
    expect(await awaited).toBe(102);
    expect(await firstValueFrom(answer)).toBe(2);
    expect(rest.runs()).toBe(1);
  });

  it('a settled rest is delivered during subscribe: the chain stays synchronous', () => {
    const answer = new ChainAnswer(Later.from(3));
    let seen: unknown;
    let completed = false;
    answer.subscribe({ next: (v) => (seen = v), complete: () => (completed = true) });
    expect([seen, completed]).toEqual([3, true]);
    expect(answer.now()).toEqual({ ok: true, value: 3 });
  });

  it('retry after a failure gets the same error by identity, runs nothing, and is told', () => {
    const boom = new Error('boom');
    const rest = counted<number>((later) => later.reject(boom));
    let retries = 0;
    const answer = new ChainAnswer(rest.run(), () => retries++);
    let caught: unknown;
    answer.pipe(retry(3)).subscribe({ error: (e) => (caught = e) });
    expect(caught).toBe(boom);
    expect(retries).toBe(3);
    expect(rest.runs()).toBe(1);
  });

  it('two subscribers waiting when it fails both get the error; neither is a retry', () => {
    const later = new Later<number>();
    let retries = 0;
    const answer = new ChainAnswer(later, () => retries++);
    const errors: unknown[] = [];
    answer.subscribe({ error: (e) => errors.push(e) });
    answer.subscribe({ error: (e) => errors.push(e) });
    later.reject('x');
    expect(errors).toEqual(['x', 'x']);
    expect(retries).toBe(0);
  });

  it('catch and finally exist; an unread failure is no unhandled rejection', async () => {
    const answer = new ChainAnswer<number>(Later.rejected(new Error('nope')));
    await expect(answer.catch((e: Error) => e.message)).resolves.toBe('nope');
    let finallyRan = false;
    await expect(answer.finally(() => (finallyRan = true))).rejects.toThrow('nope');
    expect(finallyRan).toBe(true);
    void new ChainAnswer<number>(Later.rejected(new Error('never read')));
  });

  it('an unsubscribed subscriber gets nothing when the rest settles later', () => {
    const later = new Later<number>();
    const answer = new ChainAnswer(later);
    const seen: number[] = [];
    answer.subscribe((v) => seen.push(v)).unsubscribe();
    later.resolve(1);
    expect(seen).toEqual([]);
  });
});
