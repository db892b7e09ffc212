import type { SchedulerLike } from 'rxjs';
import { memoryJournal, type JournalStore } from '../../src/index.js';

/** What a spied store answers to a renewal at a frame: renew it, refuse it (another process took the turn), or throw (a blip). */
export type Renewal = 'renew' | 'refuse' | 'throw';

/**
 * `memoryJournal()` with its `renew` and `release` recorded at `scheduler.now()` (frames, in a marble
 * test), each renewal answered as `answer(frame)` says. Past frame 5000 a renewal is refused, so a
 * broken marble test ends (the lease lost) instead of renewing forever in virtual time.
 */
export function spiedJournal(scheduler: SchedulerLike, answer: (frame: number) => Renewal = () => 'renew') {
  const journal = memoryJournal();
  const renewals: number[] = [];
  const releases: number[] = [];
  const blip = new Error('store blip');
  const store: JournalStore = {
    ...journal,
    renew(lease, ms) {
      const frame = scheduler.now();
      renewals.push(frame);
      const given = frame > 5_000 ? 'refuse' : answer(frame);
      if (given === 'throw') throw blip;
      return given === 'refuse' ? false : journal.renew(lease, ms);
    },
    release(lease) {
      releases.push(scheduler.now());
      return journal.release(lease);
    },
  };
  return { journal, store, renewals, releases, blip };
}
