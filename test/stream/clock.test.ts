import { animationFrameScheduler, asapScheduler, asyncScheduler, queueScheduler, VirtualTimeScheduler } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { clockOf, isWallClock, wallNow } from '../../src/stream/clock.js';

describe('clock', () => {
  it("RxJS's real-time schedulers are the wall clock; virtual ones are not", () => {
    for (const s of [undefined, asyncScheduler, asapScheduler, queueScheduler, animationFrameScheduler]) expect(isWallClock(s)).toBe(true);
    expect(isWallClock(new TestScheduler(() => undefined))).toBe(false);
    expect(isWallClock(new VirtualTimeScheduler())).toBe(false);
  });

  it('reads performance.now() in real time and frames on a virtual scheduler', () => {
    expect(clockOf(asyncScheduler)).toBe(wallNow);
    const scheduler = new TestScheduler(() => undefined);
    scheduler.run(({ flush, cold }) => {
      const clock = clockOf(scheduler);
      let at = -1;
      cold('25ms a').subscribe(() => (at = clock()));
      flush();
      expect(at).toBe(25);
    });
  });
});
