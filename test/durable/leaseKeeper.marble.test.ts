import { asyncScheduler } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DurableTurnError } from '../../src/durable/errors.js';
import { LeaseKeeper } from '../../src/durable/leaseKeeper.js';
import { memoryJournal, type JournalStore } from '../../src/index.js';
import { spiedJournal } from '../support/spiedJournal.js';

// The lease keeper on a virtual scheduler: renewal rounds every leaseMs / 3 frames (300 → 100), its
// own belief (`liveUntil`) on the scheduler's clock; the store's expiry stays the store's (wall clock).

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('LeaseKeeper on a virtual scheduler', () => {
  it('takes the lease at once on a synchronous store, renews it every round at exact frames, and stops at release', () => {
    const scheduler = newScheduler();
    const { store, renewals } = spiedJournal(scheduler);
    scheduler.run(() => {
      const keeper = new LeaseKeeper(store, 't', 300, scheduler);
      expect(keeper.acquire()).toBe(true); // a plain value: no promise, no tick
      expect(keeper.fence()).toMatchObject({ turn: 't', epoch: 1 });
      scheduler.schedule(() => expect(keeper.release()).toBeUndefined(), 350);
    });
    expect(renewals).toEqual([100, 200, 300]);
  });

  it('a renewal the store refuses loses the lease at that frame: listeners told once, every write fenced off', () => {
    const scheduler = newScheduler();
    const { store, renewals } = spiedJournal(scheduler, (frame) => (frame === 200 ? 'refuse' : 'renew'));
    const lost: [number, DurableTurnError][] = [];
    let keeper!: LeaseKeeper;
    scheduler.run(() => {
      keeper = new LeaseKeeper(store, 't', 300, scheduler);
      keeper.acquire();
      keeper.onLost((error) => lost.push([scheduler.now(), error]));
    });
    expect(renewals).toEqual([100, 200]); // no round after the loss: virtual time ran out of work
    expect(lost).toHaveLength(1);
    expect(lost[0]![0]).toBe(200);
    expect(lost[0]![1]).toMatchObject({ code: 'lease_lost' });
    expect(lost[0]![1].cause).toBeUndefined(); // refused: another process took it, not a failure
    expect(() => keeper.fence()).toThrow(lost[0]![1]);
    expect(keeper.lost).toBe(true);
  });

  it('renewals that fail (a store blip) are tried every round; the lease is lost when now >= liveUntil', () => {
    const scheduler = newScheduler();
    const { store, renewals, blip } = spiedJournal(scheduler, () => 'throw');
    const lost: [number, DurableTurnError][] = [];
    scheduler.run(() => {
      const keeper = new LeaseKeeper(store, 't', 300, scheduler);
      keeper.acquire(); // sent at 0: live until 300
      keeper.onLost((error) => lost.push([scheduler.now(), error]));
    });
    expect(renewals).toEqual([100, 200, 300]);
    expect(lost.map(([frame]) => frame)).toEqual([300]);
    expect(lost[0]![1]).toMatchObject({ code: 'lease_lost', cause: blip });
  });

  it('a renewal that succeeds after a blip moves liveUntil on: reckoned from its send frame', () => {
    const scheduler = newScheduler();
    const { store, renewals } = spiedJournal(scheduler, (frame) => (frame === 100 || frame === 200 ? 'throw' : frame >= 600 ? 'refuse' : 'renew'));
    const lost: number[] = [];
    scheduler.run(() => {
      const keeper = new LeaseKeeper(store, 't', 300, scheduler);
      keeper.acquire();
      keeper.onLost(() => lost.push(scheduler.now()));
    });
    // 300 renews (live until 600), so the blips at 100 and 200 lose nothing; refused at 600.
    expect(renewals).toEqual([100, 200, 300, 400, 500, 600]);
    expect(lost).toEqual([600]);
  });

  it('ensureHeld: nothing while the last good renewal is under a round old; else it renews first — at once on a synchronous store', () => {
    const scheduler = newScheduler();
    const { store, renewals } = spiedJournal(scheduler, (frame) => (frame === 100 || frame === 200 ? 'throw' : 'renew'));
    const held: [number, unknown][] = [];
    scheduler.run(() => {
      const keeper = new LeaseKeeper(store, 't', 300, scheduler);
      keeper.acquire();
      scheduler.schedule(() => held.push([scheduler.now(), keeper.ensureHeld()]), 150); // 150 < 300 - 100: live
      scheduler.schedule(() => held.push([scheduler.now(), keeper.ensureHeld()]), 250); // 250 >= 200: renew first
      scheduler.schedule(() => keeper.release(), 260);
    });
    expect(held).toEqual([[150, undefined], [250, undefined]]);
    expect(renewals).toEqual([100, 200, 250]);
  });

  it('ensureHeld once the lease is lost throws the lease_lost error', () => {
    const scheduler = newScheduler();
    const { store } = spiedJournal(scheduler, () => 'refuse');
    scheduler.run(() => {
      const keeper = new LeaseKeeper(store, 't', 300, scheduler);
      keeper.acquire();
      scheduler.schedule(() => expect(() => keeper.ensureHeld()).toThrow(expect.objectContaining({ code: 'lease_lost' })), 150);
    });
  });

  it('acquire answers false, at once, while another owner holds a live lease', () => {
    const scheduler = newScheduler();
    const journal = memoryJournal();
    scheduler.run(() => {
      const holder = new LeaseKeeper(journal, 't', 300, scheduler);
      expect(holder.acquire()).toBe(true);
      const other = new LeaseKeeper(journal, 't', 300, scheduler);
      expect(other.acquire()).toBe(false);
      expect(() => other.fence()).toThrow("the turn's lease was not taken");
      holder.release();
    });
  });
});

describe('LeaseKeeper on a store that answers later, and on the wall clock', () => {
  afterEach(() => vi.restoreAllMocks());

  it('acquire, renew and release are Laters that settle with the store', async () => {
    const journal = memoryJournal();
    const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 1));
    const store: JournalStore = {
      ...journal,
      acquire: (turn, owner, ms) => later(journal.acquire(turn, owner, ms) as number | undefined),
      release: async (lease) => {
        await later(undefined);
        await journal.release(lease);
      },
    };
    const keeper = new LeaseKeeper(store, 't', 30_000);
    const taking = keeper.acquire();
    expect(taking).not.toBe(true);
    expect(await taking).toBe(true);
    await keeper.release();
    expect(journal.acquire('t', 'someone else', 1_000)).toBe(2); // released: another owner takes it
  });

  it('on a real-time scheduler the rounds are a setInterval that does not keep the process alive', () => {
    const spy = vi.spyOn(globalThis, 'setInterval');
    const keeper = new LeaseKeeper(memoryJournal(), 't', 300, asyncScheduler);
    expect(keeper.acquire()).toBe(true);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy.mock.calls[0]![1]).toBe(100);
    const timer = spy.mock.results[0]!.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    keeper.release();
  });
});
