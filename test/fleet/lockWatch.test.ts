/**
 * A worker's own watch of its jobs' locks (`LockWatch`), on fake clocks: when a body's signal aborts
 * (never before its lock may have lapsed: `lockMs` after the last set Redis answered, sent then — or
 * after its connection was last ready, for one that waited while Redis was away), when an ended job's
 * outcome is recorded (only when the lock may lapse before BullMQ recorded the end), and when the
 * worker is idle. The fault tests (`faults.cutOff`, `faults.redisRestart`) run it with real processes.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LockWatch, type SettledJob } from '../../src/bullmq/lockWatch.js';

const LOCK_MS = 1000;
const returned: SettledJob = { returned: { k: 'v', value: 1, sig: 'mac' } };

describe('LockWatch', () => {
  let readyAt = 0;
  let recorded: { jobId: string; outcome: SettledJob; keepMs: number }[] = [];
  const watch = () => new LockWatch(LOCK_MS, () => readyAt, (jobId, outcome, keepMs) => recorded.push({ jobId, outcome, keepMs }));
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    readyAt = performance.now();
    recorded = [];
  });
  afterEach(() => vi.useRealTimers());

  it('aborts a running body lockMs after the lock was set, not before; answered renewals push it back', () => {
    const locks = watch();
    const held = locks.hold('j', Date.now());
    vi.advanceTimersByTime(LOCK_MS - 1);
    expect(held.lapsed.aborted).toBe(false);
    locks.renewed(['j'], performance.now() - 100); // sent 100 ms ago, answered now
    vi.advanceTimersByTime(LOCK_MS - 101);
    expect(held.lapsed.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(held.lapsed.aborted).toBe(true);
    held.settled(returned, 5000);
    vi.advanceTimersByTime(10 * LOCK_MS);
    expect(recorded).toEqual([]); // a body stopped by a lapse is a lost worker's: nothing to keep
  });

  it('a renewal queued while Redis was away counts from when the connection was ready again', () => {
    const locks = watch();
    const held = locks.hold('j', Date.now());
    const sentAt = performance.now() + 400;
    vi.advanceTimersByTime(900);
    readyAt = performance.now(); // back: the renewal sent at +400 went out now
    locks.renewed(['j'], sentAt);
    vi.advanceTimersByTime(LOCK_MS - 1);
    expect(held.lapsed.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(held.lapsed.aborted).toBe(true);
  });

  it('Redis saying the lock is not ours aborts at once', () => {
    const locks = watch();
    const held = locks.hold('j', Date.now());
    locks.lost(['j']);
    expect(held.lapsed.aborted).toBe(true);
  });

  it('an ended job is recorded only when its lock may lapse before BullMQ recorded it', () => {
    const locks = watch();
    const kept = locks.hold('kept', Date.now());
    const done = locks.hold('done', Date.now());
    kept.settled(returned, 5000);
    done.settled({ failed: 'reason' }, 5000);
    locks.finished('done');
    vi.advanceTimersByTime(LOCK_MS);
    expect(recorded).toEqual([{ jobId: 'kept', outcome: returned, keepMs: 5000 }]);
  });

  it('a job handed over again stops the processor still running for it, and is watched afresh', () => {
    const locks = watch();
    const first = locks.hold('j', Date.now());
    const second = locks.hold('j', Date.now());
    expect(first.lapsed.aborted).toBe(true);
    expect(second.lapsed.aborted).toBe(false);
    first.settled(undefined, 0); // the first processor ends: the second hold is untouched
    vi.advanceTimersByTime(LOCK_MS - 1);
    expect(second.lapsed.aborted).toBe(false);
  });

  it('idle resolves once every processor ended, whatever lapsed, in any order (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ lapse: fc.boolean(), finish: fc.boolean() }), { minLength: 1, maxLength: 8 }), fc.nat(), async (jobs, seed) => {
        const locks = watch();
        const helds = jobs.map((_, i) => locks.hold(`j${i}`, Date.now()));
        let idle = false;
        void locks.idle().then(() => (idle = true));
        jobs.forEach((job, i) => job.lapse && locks.lost([`j${i}`]));
        const order = helds.map((_, i) => i).sort((a, b) => ((a * 7919 + seed) % 13) - ((b * 7919 + seed) % 13));
        for (const [n, i] of order.entries()) {
          await Promise.resolve();
          expect(idle).toBe(false);
          helds[i]!.settled(returned, 1000);
          if (jobs[i]!.finish) locks.finished(`j${i}`);
          if (n === order.length - 1) await Promise.resolve();
        }
        expect(idle).toBe(true);
        locks.clear();
        expect(vi.getTimerCount()).toBe(0);
      }),
    );
  });
});
