import fc from 'fast-check';
import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Deadlines } from '../../src/engine/pool/deadlines.js';

/** A manual clock: `advance(ms)` runs the due timers in time order; counts live timers. */
function manualScheduler() {
  let now = 0;
  const timers = new Set<{ at: number; run: () => void }>();
  const scheduler: SchedulerLike = {
    now: () => now,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      const timer = { at: now + delay, run: () => work.call(subscription as unknown as SchedulerAction<T>, state) };
      const subscription = new Subscription(() => timers.delete(timer));
      timers.add(timer);
      return subscription;
    },
  };
  const advance = (ms: number) => {
    const until = now + ms;
    for (;;) {
      const due = [...timers].filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      timers.delete(due);
      now = due.at;
      due.run();
    }
    now = until;
  };
  return { scheduler, advance, live: () => timers.size };
}

describe('Deadlines', () => {
  it('expires each live deadline once, when its time has come, on one timer', () => {
    const { scheduler, advance, live } = manualScheduler();
    const expired: string[] = [];
    const deadlines = new Deadlines<string>(scheduler, (item) => expired.push(`${item}@${scheduler.now()}`));
    deadlines.add('a', 100);
    const b = deadlines.add('b', 100);
    advance(10);
    deadlines.add('c', 50); // earlier than a: the timer is re-armed for it
    deadlines.add('d', 100);
    expect(live()).toBe(1);
    b.unsubscribe();
    advance(200);
    expect(expired).toEqual(['c@60', 'a@100', 'd@110']);
    expect(live()).toBe(0);
    b.unsubscribe(); // a no-op, as is unsubscribing an expired one
  });

  it('an expiry may add and withdraw deadlines', () => {
    const { scheduler, advance } = manualScheduler();
    const expired: string[] = [];
    let later: { unsubscribe(): void } | undefined;
    const deadlines = new Deadlines<string>(scheduler, (item) => {
      expired.push(item);
      if (item === 'a') {
        later?.unsubscribe();
        deadlines.add('again', 5);
      }
    });
    deadlines.add('a', 10);
    later = deadlines.add('b', 10);
    advance(100);
    expect(expired).toEqual(['a', 'again']);
  });

  it('holds no timer once every deadline is withdrawn or expired (an idle pool keeps no process alive)', () => {
    const { scheduler, advance, live } = manualScheduler();
    const deadlines = new Deadlines<string>(scheduler, () => undefined);
    const a = deadlines.add('a', 300_000);
    const b = deadlines.add('b', 300_000);
    a.unsubscribe();
    expect(live()).toBe(1);
    b.unsubscribe();
    expect(live()).toBe(0);
    deadlines.add('c', 10);
    expect(live()).toBe(1);
    advance(10);
    expect(live()).toBe(0);
  });

  it('close withdraws everything, the timer too', () => {
    const { scheduler, advance, live } = manualScheduler();
    const expired: string[] = [];
    const deadlines = new Deadlines<string>(scheduler, (item) => expired.push(item));
    deadlines.add('a', 10);
    deadlines.close();
    expect(live()).toBe(0);
    advance(100);
    expect(expired).toEqual([]);
  });

  it('with a clock that stands still, the timer it fired says the deadline it was armed for has passed', () => {
    const fired: (() => void)[] = [];
    const still: SchedulerLike = {
      now: () => 0,
      schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void): Subscription {
        const subscription = new Subscription();
        fired.push(() => !subscription.closed && work.call(subscription as unknown as SchedulerAction<T>));
        return subscription;
      },
    };
    const expired: string[] = [];
    const deadlines = new Deadlines<string>(still, (item) => expired.push(item));
    deadlines.add('a', 10);
    deadlines.add('b', 20);
    fired.shift()!();
    expect(expired).toEqual(['a']);
    fired.shift()!();
    expect(expired).toEqual(['a', 'b']);
  });

  it('withdrawn entries do not pile up behind one long-lived deadline', () => {
    const { scheduler } = manualScheduler();
    const deadlines = new Deadlines<number>(scheduler, () => undefined);
    deadlines.add(-1, 1000); // never withdrawn: a straggler at the head
    for (let i = 0; i < 100_000; i++) deadlines.add(i, 1000).unsubscribe();
    const lane = (deadlines as unknown as { lanes: Map<number, { entries: { length: number } }> }).lanes.get(1000)!;
    expect(lane.entries.length).toBeLessThan(2100);
  });

  it('property: whatever the adds, withdrawals and clock steps, exactly the live deadlines expire, each at its time', () => {
    type Op = { kind: 'add'; ms: number } | { kind: 'withdraw'; k: number } | { kind: 'advance'; ms: number };
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), ms: fc.constantFrom(5, 10, 30, 100) }),
      fc.record({ kind: fc.constant('withdraw' as const), k: fc.nat() }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 40 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops: Op[]) => {
        const { scheduler, advance } = manualScheduler();
        const expiredAt = new Map<number, number>();
        const deadlines = new Deadlines<number>(scheduler, (item) => {
          expect(expiredAt.has(item)).toBe(false);
          expiredAt.set(item, scheduler.now());
        });
        const added: { at: number; handle: { unsubscribe(): void }; withdrawnAt?: number }[] = [];
        for (const o of ops) {
          if (o.kind === 'add') added.push({ at: scheduler.now() + o.ms, handle: deadlines.add(added.length, o.ms) });
          else if (o.kind === 'withdraw' && added.length > 0) {
            const entry = added[o.k % added.length]!;
            entry.withdrawnAt ??= scheduler.now();
            entry.handle.unsubscribe();
          } else if (o.kind === 'advance') advance(o.ms);
        }
        advance(1000);
        added.forEach((entry, item) => {
          const withdrawnFirst = entry.withdrawnAt !== undefined && entry.withdrawnAt < entry.at;
          if (withdrawnFirst) expect(expiredAt.has(item)).toBe(false);
          else if (entry.withdrawnAt === undefined) expect(expiredAt.get(item)).toBe(entry.at);
        });
      }),
      { numRuns: 300 },
    );
  });
});
