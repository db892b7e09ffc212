import { defer, EMPTY, NEVER, of, throwError, timer, map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { NO_ANSWER, PendingAnswer, toAnswer } from '../../src/stream/answer.js';
import { Later } from '../../src/util/later.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** What `answer` settled with, read synchronously (`undefined` while pending). */
function read<T>(answer: T | Later<T>): { ok: true; value: T } | { ok: false; error: unknown } | undefined {
  if (!(answer instanceof Later)) return { ok: true, value: answer };
  let out: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
  answer.then(
    (value) => (out = { ok: true, value }),
    (error: unknown) => (out = { ok: false, error }),
  );
  return out;
}

describe('toAnswer', () => {
  it('keeps plain values, arrays and strings as values (iterables are answers, not streams)', () => {
    expect(toAnswer('allowed-once')).toBe('allowed-once');
    const arr = ['a', 'b'];
    expect(toAnswer(arr)).toBe(arr);
    expect(toAnswer(undefined)).toBeUndefined();
    expect(toAnswer(null)).toBeNull();
    const decision = { decision: 'deny', reason: 'no' };
    expect(toAnswer(decision)).toBe(decision);
  });

  it('gives the value at once for a stream that answers during subscribe (of)', () => {
    expect(toAnswer(of('x'))).toBe('x');
  });

  it('a synchronous source that emits twice: the first counts, the source is unsubscribed at once', () => {
    scheduler().run(({ cold, expectSubscriptions, flush }) => {
      const source = cold('(ab|)');
      const answer = toAnswer(source);
      flush();
      expect(read(answer)).toEqual({ ok: true, value: 'a' });
      expectSubscriptions(source.subscriptions).toBe('(^!)');
    });
    let seen = 0;
    const synchronous = defer(() => {
      seen++;
      return of('a', 'b');
    });
    expect(toAnswer(synchronous)).toBe('a');
    expect(seen).toBe(1);
  });

  it('the first value at frame 30 settles at frame 30 and unsubscribes there', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectSubscriptions, flush }) => {
      const source = cold('30ms a 9ms b');
      const answer = toAnswer(source);
      expect(answer).toBeInstanceOf(PendingAnswer);
      let at = -1;
      (answer as Later<string>).then(() => (at = testScheduler.now()));
      flush();
      expect(at).toBe(30);
      expect(read(answer)).toEqual({ ok: true, value: 'a' });
      expectSubscriptions(source.subscriptions).toBe('^ 29ms !');
    });
  });

  it('empty fails closed, never stays pending, throw is a failure', () => {
    const empty = read(toAnswer(EMPTY));
    expect(empty?.ok).toBe(false);
    expect(((empty as { error: Error }).error).message).toBe(NO_ANSWER);
    const boom = new Error('boom');
    expect(read(toAnswer(throwError(() => boom)))).toEqual({ ok: false, error: boom });
    expect(read(toAnswer(NEVER))).toBeUndefined();
  });

  it('a stream whose subscribe throws is a failure, not a throw', () => {
    const boom = new Error('subscribe threw');
    const answer = toAnswer(
      defer(() => {
        throw boom;
      }),
    );
    expect(read(answer)).toEqual({ ok: false, error: boom });
  });

  it('cancel unsubscribes the stream and ignores what comes later', () => {
    scheduler().run(({ cold, expectSubscriptions, flush }) => {
      const source = cold('---a');
      const answer = toAnswer(source) as PendingAnswer<string>;
      let seen: unknown = 'nothing';
      answer.then((v) => (seen = v));
      // cancel at frame 1
      timer(1).subscribe(() => answer.cancel());
      flush();
      expect(seen).toBe('nothing');
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('an interop observable and an async iterable are streams', async () => {
    const interop = { [Symbol.observable ?? '@@observable']: () => of(4) } as unknown;
    const rxInterop = { ['@@observable']: () => of(4) } as unknown;
    expect([toAnswer(interop), toAnswer(rxInterop)]).toContain(4);
    async function* gen() {
      yield 5;
      yield 6;
    }
    await expect(toAnswer(gen()) as Later<number>).resolves.toBe(5);
  });

  it('a promise answers when it settles; a settled Later is itself', async () => {
    const settled = Later.from(1);
    expect(toAnswer(settled)).toBe(settled);
    const answer = toAnswer(Promise.resolve(2));
    expect(answer).toBeInstanceOf(Later);
    await expect(answer as Later<number>).resolves.toBe(2);
  });

  it('works with operators piped on a value stream', () => {
    scheduler().run(({ flush }) => {
      const answer = toAnswer(timer(5).pipe(map(() => 'late')));
      flush();
      expect(read(answer)).toEqual({ ok: true, value: 'late' });
    });
  });
});
