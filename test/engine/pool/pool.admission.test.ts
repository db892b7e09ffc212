import { beforeEach, describe, expect, it } from 'vitest';
import { createLimiter, createRateLimiter } from '../../../src/index.js';
import { at, bench, bodies, log, reset, scheduler, settle, tool } from './poolHarness.js';

// What a call waits for before it takes a slot (the pool's rules 5, 8a, 8c, 8d) and the batch options
// (8), on a pool driven alone in virtual time (`poolHarness`). The log reads `start <id> @t` when a body
// starts and `<id> <status> @t` when its result comes out.

beforeEach(reset);

const starts = () => log.filter((line) => line.startsWith('start'));

describe('rule 5: maxPending', () => {
  it('while results wait behind an unfinished earlier call, only that call may start', () => {
    const { send } = bench([tool('p')], { concurrency: 2, maxPending: 1 });
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      settle(1, 'b'); // b's result waits behind a: the bound is full
      at(2, () => (send('c', 'p'), send('d', 'p'))); // a slot is free, yet neither starts
      settle(5, 'a');
      settle(6, 'c');
      settle(7, 'd');
    });
    expect(log).toEqual(['start a @0', 'start b @0', 'b ok @1', 'a ok @5', 'start c @5', 'start d @5', 'c ok @6', 'd ok @7']);
  });

  it('the straggler may start whichever way it came (here a granted permit), while the calls after it wait', () => {
    const limiter = createLimiter({ max: 1 });
    const other = bench([tool('l', { limit: limiter })]); // another pipeline holds the permit until 3
    other.send('z', 'l');
    const { send } = bench([tool('l', { limit: limiter }), tool('p')], { concurrency: 3, maxPending: 1 });
    scheduler.run(() => {
      send('a', 'l'); // parked: the straggler
      send('b', 'p');
      send('c', 'p');
      settle(1, 'b');
      at(2, () => send('d', 'p')); // two slots free, but b's result waits behind a
      settle(3, 'z');
      settle(4, 'a');
      settle(8, 'c');
      settle(9, 'd');
    });
    expect(starts()).toEqual(['start z @0', 'start b @0', 'start c @0', 'start a @3', 'start d @4']);
  });

  it("a finished call's result waits before its slot is refilled: it counts at once", () => {
    const { send } = bench([tool('p')], { concurrency: 2, maxPending: 1 });
    scheduler.run(() => {
      send('a', 'p'); // the straggler
      send('b', 'p');
      send('c', 'p'); // queued: b's slot frees at 1, but b's result then waits behind a
      settle(1, 'b');
      settle(5, 'a');
      settle(6, 'c');
    });
    // Refilling b's slot first would have started c at 1, and c's result would have waited too (2 > 1).
    expect(log).toEqual(['start a @0', 'start b @0', 'b ok @1', 'a ok @5', 'start c @5', 'c ok @6']);
  });

  it("results wait behind the straggler's result until it is out, not only until it leaves the pool (a slow post chain)", () => {
    const { send, arrive, inOrder } = bench([tool('p')], { concurrency: 2, maxPending: 1, onTheWay: ['a'] });
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      settle(1, 'b'); // b's result waits behind a
      settle(2, 'a'); // a leaves the pool, but reaches the reorder only at 8: b still waits
      at(3, () => send('c', 'p')); // so c does not start, though both slots are free
      arrive(8, 'a'); // a and b go out: c starts
      settle(9, 'c');
    });
    expect(log).toEqual(['start a @0', 'start b @0', 'b ok @1', 'a ok @2', 'start c @8', 'c ok @9']);
    expect(inOrder).toEqual(['a', 'b', 'c']);
  });

  it("the straggler's own result on its way waits behind nothing; while one is on its way, an idle pool waits for it", () => {
    const { send, arrive } = bench([tool('p')], { concurrency: 1, maxPending: 1, onTheWay: ['a'] });
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      settle(1, 'a'); // on its way until 5: b starts in its slot
      settle(2, 'b'); // b waits behind a
      at(3, () => send('c', 'p')); // nothing runs, but a is coming: c waits for it
      arrive(5, 'a');
      settle(6, 'c');
    });
    expect(log).toEqual(['start a @0', 'a ok @1', 'start b @1', 'b ok @2', 'start c @5', 'c ok @6']);
  });
});

describe('rule 8: batch options', () => {
  // Each case is run with the option set and with the pool's default, so it shows what the option changes.
  it.each([
    ['turn', ['start a @0', 'start b @0', 'b cancelled(sibling_failed) @1', 'a error @1', 'complete @1']],
    ['none', ['start a @0', 'start b @0', 'a error @1', 'b ok @3', 'complete @3']],
  ] as const)('cancelRest %s: what a failure under cancel-rest reaches', (cancelRest, expected) => {
    const { send, pool } = bench([tool('p')], { onError: 'cancel-rest', batch: { cancelRest, complete: 'when-answered' } });
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      pool.complete();
      settle(1, 'a', 'boom');
      settle(3, 'b');
    });
    expect(log).toEqual(expected);
  });

  it.each([
    ['turn', ['start a @0', 'start b @0', 'b cancelled(cancel_requested) @1', 'a ok @2', 'complete @2']],
    ['none', ['start a @0', 'start b @0', 'a ok @2', 'b ok @3', 'complete @3']],
  ] as const)("cancelRest %s: what a body's ctx.cancelRest() reaches", (cancelRest, expected) => {
    const { send, pool } = bench([tool('p')], { batch: { cancelRest, complete: 'when-answered' } });
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      pool.complete();
      at(1, () => bodies.get('a')!.cancelRest());
      settle(2, 'a');
      settle(3, 'b');
    });
    expect(log).toEqual(expected);
  });

  it('cancelRest none: the run\'s signal still cancels every call', () => {
    const controller = new AbortController();
    const { send } = bench([tool('p')], { batch: { cancelRest: 'none', complete: 'when-answered' } }, controller.signal);
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      at(1, () => controller.abort());
    });
    expect(log).toEqual(['start a @0', 'start b @0', 'a cancelled(aborted) @1', 'b cancelled(aborted) @1']);
  });

  it.each([
    ['when-answered', ['start a @0', 'a cancelled(aborted) @1', 'complete @1']],
    ['when-settled', ['start a @0', 'a cancelled(aborted) @1', 'complete @11']],
  ] as const)('complete %s: a cancelled body that ignores its signal holds its slot for its grace', (complete, expected) => {
    const controller = new AbortController();
    const { send, pool } = bench([tool('p')], { batch: { cancelRest: 'none', complete } }, controller.signal); // grace 10
    scheduler.run(() => {
      send('a', 'p');
      pool.complete();
      at(1, () => controller.abort());
    });
    expect(log).toEqual(expected);
  });

  it.each([
    ['when-answered', ['start a @0', 'start b @0', 'b cancelled(sibling_failed) @1', 'a error @1', 'complete @1']],
    ['when-settled', ['start a @0', 'start b @0', 'b cancelled(sibling_failed) @1', 'a error @1', 'complete @4']],
  ] as const)('complete %s: every slot released, whatever cancelled its call (here a sibling, cancel-rest reaching the turn)', (complete, expected) => {
    const { send, pool } = bench([tool('p')], { onError: 'cancel-rest', batch: { cancelRest: 'turn', complete } });
    scheduler.run(() => {
      send('a', 'p');
      send('b', 'p');
      pool.complete();
      settle(1, 'a', 'boom');
      settle(4, 'b'); // b's body settles within its grace: its slot is free at 4
    });
    expect(log).toEqual(expected);
  });
});

describe('rule 8a: limits', () => {
  it('a parallel call whose limit is full parks without a slot, and starts ahead of the queue once granted', () => {
    const limiter = createLimiter({ max: 1 });
    const { send } = bench([tool('l', { limit: limiter }), tool('p')], { concurrency: 2 });
    scheduler.run(() => {
      send('l1', 'l');
      send('l2', 'l'); // parked: p3 takes the second slot
      send('p3', 'p');
      send('p4', 'p');
      settle(2, 'l1'); // l2 is granted l1's permit and its slot, before p4
      settle(4, 'p3');
      settle(5, 'l2');
      settle(6, 'p4');
    });
    expect(starts()).toEqual(['start l1 @0', 'start p3 @0', 'start l2 @2', 'start p4 @4']);
  });

  it('an exclusive head waits for the parked calls before it, though nothing runs', () => {
    const limiter = createLimiter({ max: 1 });
    const other = bench([tool('l', { limit: limiter })]);
    other.send('z', 'l'); // another pipeline holds the permit until 3
    const { send } = bench([tool('l', { limit: limiter }), tool('x', { mode: 'exclusive' })]);
    scheduler.run(() => {
      send('l1', 'l'); // parked
      send('x', 'x');
      settle(3, 'z');
      settle(5, 'l1');
      settle(6, 'x');
    });
    expect(starts()).toEqual(['start z @0', 'start l1 @3', 'start x @5']);
  });

  it('an exclusive call whose limit is full waits at the head: nothing passes it', () => {
    const limiter = createLimiter({ max: 1 });
    const other = bench([tool('x', { limit: limiter, mode: 'exclusive' })]);
    other.send('z', 'x');
    const { send } = bench([tool('x', { limit: limiter, mode: 'exclusive' }), tool('p')]);
    scheduler.run(() => {
      send('x', 'x');
      send('b', 'p');
      settle(3, 'z');
      settle(4, 'x');
      settle(5, 'b');
    });
    expect(starts()).toEqual(['start z @0', 'start x @3', 'start b @4']);
  });
});

describe('rule 8c: rate limits', () => {
  it('a parallel call with no token parks without a slot and starts when a token returns', () => {
    const { send } = bench([tool('r', { rateLimit: { max: 1, perMs: 10 } }), tool('p')], { concurrency: 2 });
    scheduler.run(() => {
      send('r1', 'r');
      send('r2', 'r');
      send('p3', 'p');
      settle(1, 'r1');
      settle(2, 'p3');
      settle(11, 'r2');
    });
    expect(starts()).toEqual(['start r1 @0', 'start p3 @0', 'start r2 @10']);
  });

  it("a call takes its token only once it holds its limit's permit: no token waits on a call that cannot start", () => {
    const limiter = createLimiter({ max: 1 });
    const rate = createRateLimiter({ max: 1, perMs: 10 });
    const { send } = bench([tool('lr', { limit: limiter, rateLimit: rate }), tool('r', { rateLimit: rate })]);
    scheduler.run(() => {
      send('lr1', 'lr'); // spends the token at 0: it returns at 10
      send('lr2', 'lr'); // parked on the permit, holding no token
      send('r3', 'r'); // waits for the token
      settle(12, 'lr1');
      settle(13, 'r3');
      settle(21, 'lr2');
    });
    // The token back at 10 goes to r3, which can start; lr2 gets its permit at 12 and the next token at 20.
    expect(starts()).toEqual(['start lr1 @0', 'start r3 @10', 'start lr2 @20']);
  });
});

describe('rule 8d: after-response starts', () => {
  it('a parallel after-response call waits for the source to complete, holding no slot and blocking nobody', () => {
    const { send, pool } = bench([tool('a', { start: 'after-response' }), tool('p')], { concurrency: 1 });
    scheduler.run(() => {
      send('a', 'a');
      send('p', 'p'); // takes the only slot
      settle(2, 'p');
      at(3, () => pool.complete());
      settle(4, 'a');
    });
    expect(log).toEqual(['start p @0', 'p ok @2', 'start a @3', 'a ok @4', 'complete @4']);
  });

  it('an exclusive after-response call waits at the head: nothing passes it', () => {
    const { send, pool } = bench([tool('x', { start: 'after-response', mode: 'exclusive' }), tool('p')]);
    scheduler.run(() => {
      send('x', 'x');
      send('p', 'p');
      at(3, () => pool.complete());
      settle(4, 'x');
      settle(5, 'p');
    });
    expect(starts()).toEqual(['start x @3', 'start p @4']);
  });

  it('an exclusive head waits for the after-response calls before it', () => {
    const { send, pool } = bench([tool('a', { start: 'after-response' }), tool('x', { mode: 'exclusive' })]);
    scheduler.run(() => {
      send('a', 'a');
      send('x', 'x');
      at(3, () => pool.complete());
      settle(5, 'a');
      settle(6, 'x');
    });
    expect(starts()).toEqual(['start a @3', 'start x @5']);
  });

  it('if the source errors, the after-response calls never start: cancelled response_failed, at once and on arrival', () => {
    const { send, pool } = bench([tool('a', { start: 'after-response' }), tool('p')]);
    scheduler.run(() => {
      send('a', 'a');
      send('p', 'p');
      at(3, () => pool.error(new Error('stream cut')));
      at(4, () => send('late', 'a')); // from a stage still working
      settle(5, 'p');
    });
    expect(log).toEqual(['start p @0', 'a cancelled(response_failed) @3', 'late cancelled(response_failed) @4', 'p ok @5', 'error stream cut @5']);
    expect(bodies.has('a') || bodies.has('late')).toBe(false);
  });
});
