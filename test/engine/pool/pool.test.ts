import { beforeEach, describe, expect, it } from 'vitest';
import { createLimiter } from '../../../src/index.js';
import { at, bench, bodies, log, reset, scheduler, settle, tool } from './poolHarness.js';

// The pool's rules 1, 2, 3, 6, 7 and 7a (see `CallPool`), each on a pool driven alone in virtual time:
// records are sent by hand and bodies settle when the test says (`poolHarness`). The log reads, in
// order, `start <id> @t` when a body starts and `<id> <status> @t` when its result comes out.
// Admission (5, 8, 8a, 8c, 8d) is in `pool.admission.test.ts`.

beforeEach(reset);

const constant = (ms: number) => ({ initialMs: ms, factor: 1, maxMs: ms, jitter: 0 });

describe('rule 1: what arrives finished or cancelled', () => {
  it('a record that arrives finished is emitted at once and holds no slot', () => {
    const { send } = bench([tool('p')], { concurrency: 1 });
    scheduler.run(() => {
      send('d', 'p', { status: 'denied' });
      send('a', 'p');
      send('b', 'p');
      settle(2, 'a');
      settle(3, 'b');
    });
    // With one slot, `a` starts at once: the denied record ahead of it took none.
    expect(log).toEqual(['d denied @0', 'start a @0', 'a ok @2', 'start b @2', 'b ok @3']);
  });

  it('a record of a cancelled turn is cancelled on arrival, without starting; other turns start', () => {
    const { send } = bench([tool('p'), tool('x', { mode: 'exclusive' })]);
    scheduler.run(() => {
      send('x', 'x', { turn: 'T1' });
      settle(1, 'x', 'boom');
      at(2, () => send('late', 'p', { turn: 'T1' }));
      at(2, () => send('other', 'p', { turn: 'T2' }));
    });
    expect(log).toEqual(['start x @0', 'x error @1', 'late cancelled(sibling_failed) @2', 'start other @2']);
  });
});

describe('rule 2: slots and barriers', () => {
  it('a parallel call starts only while fewer than `concurrency` calls run, in arrival order', () => {
    const { send } = bench([tool('p')], { concurrency: 2 });
    scheduler.run(() => {
      for (const id of ['a', 'b', 'c', 'd']) send(id, 'p');
      settle(3, 'b');
      settle(5, 'a');
      settle(6, 'c');
      settle(7, 'd');
    });
    expect(log).toEqual(['start a @0', 'start b @0', 'b ok @3', 'start c @3', 'a ok @5', 'start d @5', 'c ok @6', 'd ok @7']);
  });

  it('an exclusive call starts only when nothing runs, and nothing starts beside it', () => {
    const { send } = bench([tool('p'), tool('x', { mode: 'exclusive' })], { concurrency: 5 });
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      send('x', 'x');
      at(1, () => send('c', 'p')); // arrives while x waits; free slots do not let it in
      settle(2, 'a');
      settle(3, 'b');
      settle(6, 'x');
      settle(7, 'c');
    });
    expect(log).toEqual(['start a @0', 'start b @0', 'a ok @2', 'b ok @3', 'start x @3', 'x ok @6', 'start c @6', 'c ok @7']);
  });

  it('the head blocks those behind it: a barrier is never overtaken, however many slots are free', () => {
    const { send } = bench([tool('p'), tool('x', { mode: 'exclusive' })], { concurrency: 10 });
    scheduler.run(() => {
      send('a', 'p');
      send('x1', 'x');
      send('x2', 'x');
      send('b', 'p');
      settle(2, 'a');
      settle(3, 'x1');
      settle(4, 'x2');
      settle(5, 'b');
    });
    expect(log.filter((line) => line.startsWith('start'))).toEqual(['start a @0', 'start x1 @2', 'start x2 @3', 'start b @4']);
  });
});

describe('rule 3: cancel-rest', () => {
  it("a failure under cancel-rest cancels its turn's queued and running calls at once; other turns go on", () => {
    const { send, results } = bench([tool('p')], { concurrency: 3, onError: 'cancel-rest' });
    scheduler.run(() => {
      send('a', 'p', { turn: 'T1' });
      send('b', 'p', { turn: 'T1' });
      send('c', 'p', { turn: 'T2' });
      send('d', 'p', { turn: 'T1' });
      send('e', 'p', { turn: 'T2' });
      settle(2, 'a', 'boom'); // b never settles: its result comes now all the same
      settle(4, 'c');
      settle(5, 'e');
    });
    expect(log).toEqual([
      'start a @0',
      'start b @0',
      'start c @0',
      'b cancelled(sibling_failed) @2',
      'd cancelled(sibling_failed) @2',
      'start e @2', // in a's slot: T2 goes on
      'a error @2',
      'c ok @4',
      'e ok @5',
    ]);
    expect(bodies.get('b')!.signal.aborted).toBe(true);
    expect(bodies.get('c')!.signal.aborted).toBe(false);
    expect(results.find((record) => record.id === 'b')!.error).toMatchObject({ byCallId: 'a', started: true });
    expect(results.find((record) => record.id === 'd')!.error).toMatchObject({ byCallId: 'a', started: false });
  });

  it('`continue` cancels nothing; by default a parallel failure continues and an exclusive one cancels the rest', () => {
    const { send } = bench([tool('p'), tool('x', { mode: 'exclusive' }), tool('q', { onError: 'continue', mode: 'exclusive' })], { concurrency: 2 });
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      settle(1, 'a', 'boom');
      settle(2, 'b');
      at(3, () => (send('q', 'q'), send('c', 'p')));
      settle(4, 'q', 'boom'); // exclusive, but its tool says continue
      settle(5, 'c');
      at(6, () => (send('x', 'x'), send('d', 'p')));
      settle(7, 'x', 'boom');
    });
    expect(log).toEqual([
      'start a @0',
      'start b @0',
      'a error @1',
      'b ok @2',
      'start q @3',
      'q error @4',
      'start c @4',
      'c ok @5',
      'start x @6',
      'd cancelled(sibling_failed) @7',
      'x error @7',
    ]);
  });

  it("the run's signal cancels every turn: running, queued and later calls", () => {
    const controller = new AbortController();
    const { send } = bench([tool('p')], { concurrency: 2 }, controller.signal);
    scheduler.run(() => {
      send('a', 'p', { turn: 'T1' });
      send('b', 'p', { turn: 'T2' });
      send('c', 'p', { turn: 'T2' });
      at(2, () => controller.abort());
      at(3, () => send('d', 'p', { turn: 'T3' }));
    });
    expect(log).toEqual(['start a @0', 'start b @0', 'a cancelled(aborted) @2', 'b cancelled(aborted) @2', 'c cancelled(aborted) @2', 'd cancelled(aborted) @3']);
    expect(bodies.get('a')!.signal.aborted && bodies.get('b')!.signal.aborted).toBe(true);
  });
});

describe('rule 6: completion', () => {
  it("completion waits for every received call's result", () => {
    const { send, pool } = bench([tool('p')]);
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      at(1, () => pool.complete());
      settle(3, 'a');
      settle(4, 'b');
    });
    expect(log).toEqual(['start a @0', 'start b @0', 'a ok @3', 'b ok @4', 'complete @4']);
  });

  it('a source error is forwarded after every result; with nothing in flight, at once', () => {
    const { send, pool } = bench([tool('p')]);
    scheduler.run(() => {
      send('a', 'p');
      at(1, () => pool.error(new Error('boom')));
      settle(3, 'a');
    });
    expect(log).toEqual(['start a @0', 'a ok @3', 'error boom @3']);
    reset();
    const idle = bench([tool('p')]);
    idle.pool.error(new Error('boom'));
    expect(log).toEqual(['error boom @0']);
  });
});

describe('rule 7: teardown', () => {
  it('teardown aborts the bodies holding a slot, starts nothing more and leaves no timer on the scheduler', () => {
    const rated = tool('rr', { timeoutMs: 50, retry: { attempts: 2, backoff: constant(1) }, rateLimit: { max: 1, perMs: 100 } });
    const { send, subscription } = bench([tool('t', { timeoutMs: 50 }), tool('r', { retry: { attempts: 2, backoff: constant(100) } }), rated], { concurrency: 3 });
    let left: unknown[] = [];
    scheduler.run(() => {
      send('a', 't'); // its time limit is armed
      send('b', 'r');
      send('rr', 'rr');
      send('c', 't'); // queued: starts at 2, in the slot rr gives back
      send('d', 't'); // queued
      settle(1, 'b', 'flaky'); // b waits out its backoff in its slot
      settle(1, 'rr', 'flaky'); // rr's retry, due at 2, has no token: it waits out of its slot, on its time limit
      const late = settle(5, 'a');
      at(3, () => {
        subscription.unsubscribe();
        left = scheduler.actions.filter((action) => action !== late);
      });
    });
    expect(left).toEqual([]);
    expect(bodies.get('a')!.signal.aborted && bodies.get('c')!.signal.aborted).toBe(true);
    expect(log).toEqual(['start a @0', 'start b @0', 'start rr @0', 'start c @2']); // no result after teardown, d never started, b and rr never retried
  });

  it("a body that ignores its abort keeps its limit's permit until it settles or its grace is over", () => {
    const limiter = createLimiter({ max: 2 });
    const { send, subscription } = bench([tool('l', { limit: limiter })]); // grace 10
    const active: string[] = [];
    const check = (frame: number) => at(frame, () => active.push(`${limiter.active()} @${frame}`));
    scheduler.run(() => {
      send('a', 'l');
      send('b', 'l');
      at(2, () => subscription.unsubscribe());
      settle(5, 'b'); // within its grace: its permit returns now
      [2, 4, 5, 11, 13].forEach(check); // (a check at 12 would run before the grace's timer, set later)
    });
    expect(active).toEqual(['2 @2', '2 @4', '1 @5', '1 @11', '0 @13']);
    expect(scheduler.actions).toEqual([]);
  });
});

describe('rule 7a: a resumed call whose outcome is unknown', () => {
  it('an exclusive one fails at its turn as an exclusive failure: it cancels the rest of its turn, never the calls before it', () => {
    const { send, results } = bench([tool('p'), tool('x', { mode: 'exclusive' })]);
    scheduler.run(() => {
      send('a', 'p');
      send('x', 'x', { status: 'outcome_unknown' });
      send('b', 'p');
      settle(2, 'a');
    });
    expect(log).toEqual(['start a @0', 'a ok @2', 'b cancelled(sibling_failed) @2', 'x error @2']);
    expect(results.find((record) => record.id === 'x')!.error?.code).toBe('outcome_unknown');
    expect(bodies.has('x')).toBe(false);
  });

  it('a parallel one waits for its turn behind a barrier and cancels nothing', () => {
    const { send } = bench([tool('p'), tool('x', { mode: 'exclusive' })]);
    scheduler.run(() => {
      send('x', 'x');
      send('u', 'p', { status: 'outcome_unknown' });
      send('b', 'p');
      settle(2, 'x');
      settle(3, 'b');
    });
    expect(log).toEqual(['start x @0', 'x ok @2', 'u error @2', 'start b @2', 'b ok @3']);
  });

  it('one whose tool is gone from the pipeline is emitted at once, even behind a running barrier', () => {
    const { send } = bench([tool('x', { mode: 'exclusive' })]);
    scheduler.run(() => {
      send('x', 'x');
      send('g', 'gone', { status: 'outcome_unknown' });
      settle(2, 'x');
    });
    expect(log).toEqual(['start x @0', 'g error @0', 'x ok @2']);
  });
});
