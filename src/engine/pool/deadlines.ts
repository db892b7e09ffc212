import type { SchedulerLike, Subscription, Unsubscribable } from 'rxjs';
import { Fifo } from '../../util/fifo.js';

/**
 * The time limits of many items on one scheduler timer: `add(item, ms)` arms a deadline `ms` from
 * now, the handle it returns withdraws it, and `onExpired(item)` is called for each deadline that
 * passes (each once, when due — those due at one wake-up lane by lane — and none after it was
 * withdrawn or after `close`).
 *
 * Why not one `scheduler.schedule` per item: every body attempt of the pool has a time limit (5 minutes
 * by default), and a timer per attempt — an RxJS action, a Node timer in its list, its removal — was
 * about a tenth of the per-call cost of a batch of quick calls (bench/overhead). Items with the same
 * duration expire in the order they were added, so each duration is a FIFO lane and only the
 * earliest head needs a timer. Withdrawn entries leave their lane from its head as it gets there, and
 * a lane with more withdrawn than live entries is compacted, so memory stays proportional to what
 * is live even behind one long-running item.
 *
 * @example
 * ```ts
 * const deadlines = new Deadlines(asyncScheduler, (record) => timeOut(record));
 * run.timer = deadlines.add(record, 30_000); // run.timer.unsubscribe() when the body settles first
 * ```
 */
export class Deadlines<T> {
  /** One lane per duration: its deadlines ascend from head to tail. */
  private readonly lanes = new Map<number, Lane<T>>();
  /** The scheduled wake-up, and when it is due. */
  private timer: Subscription | undefined = undefined;
  private wakeAt = Infinity;
  /** The entry the timer was armed for: it has expired when the timer fires, whatever `now()` says. */
  private wakeFor: Entry<T> | undefined = undefined;
  private closed = false;
  /** Deadlines neither withdrawn nor expired: at 0 the timer is dropped, so an idle pool holds none. */
  private live = 0;
  private readonly wake = () => this.expire();
  private readonly withdrawn = () => {
    if (--this.live === 0) this.disarm();
  };

  constructor(
    private readonly scheduler: SchedulerLike,
    private readonly onExpired: (item: T) => void,
  ) {}

  /** Arms a deadline `ms` milliseconds from now. */
  add(item: T, ms: number): Unsubscribable {
    let lane = this.lanes.get(ms);
    if (lane === undefined) this.lanes.set(ms, (lane = new Lane()));
    const entry = new Entry(item, this.scheduler.now() + ms, lane, this.withdrawn);
    lane.entries.push(entry);
    this.live++;
    if (entry.at < this.wakeAt) this.arm(entry);
    return entry;
  }

  /** Withdraws every deadline and the timer. */
  close(): void {
    this.closed = true;
    this.lanes.clear();
    this.disarm();
  }

  private disarm(): void {
    this.timer?.unsubscribe();
    this.timer = undefined;
    this.wakeAt = Infinity;
    this.wakeFor = undefined;
  }

  private arm(entry: Entry<T>): void {
    this.timer?.unsubscribe();
    this.wakeAt = entry.at;
    this.wakeFor = entry;
    this.timer = this.scheduler.schedule(this.wake, Math.max(0, entry.at - this.scheduler.now()));
  }

  private expire(): void {
    const due = this.wakeFor!;
    this.timer = undefined;
    this.wakeAt = Infinity;
    this.wakeFor = undefined;
    // A scheduler's clock may be coarser than its timers (or virtual, and still): the entry the timer
    // was armed for is due, and so is every entry up to its deadline or the clock's reading.
    const now = Math.max(this.scheduler.now(), due.withdrawn ? -Infinity : due.at);
    const expired: Entry<T>[] = [];
    let next: Entry<T> | undefined;
    for (const [ms, lane] of this.lanes) {
      const { entries } = lane;
      for (let head = entries.peek(); head !== undefined && (head.withdrawn || head.at <= now); head = entries.peek()) {
        entries.shift();
        head.inLane = false;
        if (head.withdrawn) lane.withdrawn--;
        else expired.push(head);
      }
      const head = entries.peek();
      if (head === undefined) this.lanes.delete(ms);
      else if (next === undefined || head.at < next.at) next = head;
    }
    if (next !== undefined) this.arm(next);
    // Last: an expiry may add deadlines, or withdraw others (those due now too).
    for (const entry of expired) {
      if (this.closed) return;
      if (entry.withdrawn) continue;
      entry.withdrawn = true; // expired: unsubscribing its handle later changes nothing
      this.live--;
      this.onExpired(entry.item);
    }
  }
}

/** The deadlines of one duration. */
class Lane<T> {
  readonly entries = new Fifo<Entry<T>>();
  /** Entries still in `entries` that were withdrawn. */
  withdrawn = 0;

  /** An entry was withdrawn: drop withdrawn ones from the head, and compact when they are the majority. */
  tidy(): void {
    const { entries } = this;
    for (let head = entries.peek(); head !== undefined && head.withdrawn; head = entries.peek()) {
      entries.shift();
      head.inLane = false;
      this.withdrawn--;
    }
    if (this.withdrawn >= 1024 && this.withdrawn * 2 > entries.length) {
      for (const entry of entries.removeWhere((entry) => entry.withdrawn)) entry.inLane = false;
      this.withdrawn = 0;
    }
  }
}

class Entry<T> implements Unsubscribable {
  /** Withdrawn, or expired: either way it will not (again) expire. */
  withdrawn = false;
  /** Still counted in its lane's entries (not yet shifted or compacted out). */
  inLane = true;

  constructor(
    readonly item: T,
    readonly at: number,
    private readonly lane: Lane<T>,
    private readonly onWithdrawn: () => void,
  ) {}

  unsubscribe(): void {
    if (this.withdrawn) return;
    this.withdrawn = true;
    this.onWithdrawn();
    if (!this.inLane) return; // due now, about to be told: it is skipped
    this.lane.withdrawn++;
    this.lane.tidy();
  }
}
