import type { SchedulerLike, Subscription } from 'rxjs';
import { Fifo } from '../../util/fifo.js';
import type { Grant } from './permits.js';

/** One key's bucket: tokens taken and not yet spent, the times spent tokens return, the waiters. */
interface Bucket {
  /** Tokens taken by calls that have not started their body yet (returned if they never do). */
  reserved: number;
  /** When each spent token returns (`start + perMs`), oldest first: starts come in time order. */
  readonly returns: Fifo<number>;
  readonly waiters: Fifo<Grant>;
  readonly withdrawn: Set<Grant>;
  /** Armed while someone waits and the next token returns at a known time. */
  timer: Subscription | undefined;
  /** The scheduler the timer runs on: the one of the call that waited first. */
  scheduler: SchedulerLike | undefined;
}

/** When a spent token of `key` returns, on the clock of the scheduler it was spent on. */
interface Expiry {
  readonly key: string;
  readonly bucket: Bucket;
  readonly at: number;
  readonly clock: SchedulerLike;
}

/**
 * A keyed token bucket for rate limits, with first-come handoff: `max` tokens per key; a call takes one
 * before its body starts (`tryAcquire`, or `wait` for one), spends it when the body starts (`spend`:
 * the token returns `perMs` later) or hands it back when the body never starts (`release`). A token is
 * therefore used by at most one body start in any `perMs`-long window, so no window holds more than
 * `max` starts. Synchronous; on the scheduler passed in (virtual time in tests) the only timer is one
 * per key with waiters, cancelled when nobody waits any more. Internal machinery behind
 * `RateLimiter` (see `src/tool/schedule/rateLimiter.ts`), which keeps one `Tokens` per scheduler: the
 * times in `returns` are of one clock.
 *
 * A key's bucket goes once it is as good as new (no token out, nobody waiting): keys taken from a
 * model's arguments come and go, and each bucket costs about 600 bytes. The last spent token of a key
 * returns `perMs` after its start, so each start queues an expiry (O(1)); expiries that passed are
 * swept on each take and start, and by one real timer, unref'd so it never holds the process, for a
 * pipeline gone idle. Sweeping only drops what is as good as new, so when it runs changes nothing
 * the limiter does: under virtual time the real timer finds the clock where it was and stops.
 */
export class Tokens {
  private readonly buckets = new Map<string, Bucket>();
  /** The clock of the last scheduler seen, for `available` outside a pipeline. */
  private now: () => number = Date.now;
  /** When spent tokens return, in the order they were spent: the buckets that may go then. */
  private readonly expiries = new Fifo<Expiry>();
  /** Armed while expiries are queued (see `armSweep`). */
  private sweepTimer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(
    readonly max: number,
    readonly perMs: number,
  ) {}

  /** Tokens of `key` free now. */
  available(key: string): number {
    const bucket = this.buckets.get(key);
    return bucket === undefined ? this.max : this.free(bucket, this.now());
  }

  /** Waiters for `key` now. */
  waiting(key: string): number {
    const bucket = this.buckets.get(key);
    return bucket === undefined ? 0 : bucket.waiters.length - bucket.withdrawn.size;
  }

  /** Takes a token of `key` if one is free and nobody waits for one; true when taken. */
  tryAcquire(key: string, scheduler: SchedulerLike): boolean {
    this.now = () => scheduler.now();
    this.sweep();
    const bucket = this.bucket(key);
    if (this.waiting(key) > 0 || this.free(bucket, scheduler.now()) === 0) {
      this.dropIfIdle(key, bucket);
      return false;
    }
    bucket.reserved++;
    return true;
  }

  /** Queues `grant` for the next token of `key`; it is called (once) holding that token. */
  wait(key: string, grant: Grant, scheduler: SchedulerLike): void {
    const bucket = this.bucket(key);
    bucket.waiters.push(grant);
    bucket.scheduler ??= scheduler;
    this.arm(key, bucket);
  }

  /** Withdraws a waiter that was not granted yet; false when it was not waiting. */
  withdraw(key: string, grant: Grant): boolean {
    const bucket = this.buckets.get(key);
    if (bucket === undefined || bucket.withdrawn.has(grant)) return false;
    bucket.withdrawn.add(grant);
    if (this.waiting(key) === 0) this.quiet(key, bucket);
    return true;
  }

  /** The body of a call holding a token of `key` starts now: the token returns `perMs` from now. */
  spend(key: string, scheduler: SchedulerLike): void {
    const bucket = this.buckets.get(key)!;
    bucket.reserved--;
    const at = scheduler.now() + this.perMs;
    bucket.returns.push(at);
    this.expiries.push({ key, bucket, at, clock: scheduler });
    this.arm(key, bucket);
    this.armSweep();
  }

  /** A call holding a token of `key` ends without starting its body: the token is free again at once. */
  release(key: string): void {
    const bucket = this.buckets.get(key)!;
    bucket.reserved--;
    this.serve(key, bucket);
  }

  private bucket(key: string): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { reserved: 0, returns: new Fifo(), waiters: new Fifo(), withdrawn: new Set(), timer: undefined, scheduler: undefined };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** Tokens free at `now`: returned ones are dropped from `returns`. */
  private free(bucket: Bucket, now: number): number {
    const { returns } = bucket;
    while (returns.length > 0 && returns.peek()! <= now) returns.shift();
    return this.max - bucket.reserved - returns.length;
  }

  /**
   * Grants free tokens to the oldest waiters, one at a time — a grant may start a body (spending its
   * token here) or cancel calls (withdrawing their waits), so the state is read again after each —
   * then arms the timer for the next return if some still wait.
   */
  private serve(key: string, bucket: Bucket): void {
    bucket.timer?.unsubscribe();
    bucket.timer = undefined;
    const now = bucket.scheduler?.now() ?? this.now();
    while (this.free(bucket, now) > 0 && this.waiting(key) > 0) {
      let next = bucket.waiters.shift()!;
      while (bucket.withdrawn.delete(next)) next = bucket.waiters.shift()!; // some waiter is live
      bucket.reserved++;
      next();
    }
    if (this.waiting(key) === 0) this.quiet(key, bucket);
    else this.arm(key, bucket);
  }

  /** Someone waits: make sure a timer fires when the next spent token returns (none while all are only reserved). */
  private arm(key: string, bucket: Bucket): void {
    if (bucket.timer !== undefined || this.waiting(key) === 0 || bucket.returns.length === 0) return;
    const scheduler = bucket.scheduler!;
    const delay = Math.max(0, bucket.returns.peek()! - scheduler.now());
    bucket.timer = scheduler.schedule(() => {
      bucket.timer = undefined;
      this.serve(key, bucket);
    }, delay);
  }

  /** Nobody waits: no timer, no waiter list; the bucket goes once no token is out. */
  private quiet(key: string, bucket: Bucket): void {
    bucket.timer?.unsubscribe();
    bucket.timer = undefined;
    bucket.scheduler = undefined;
    bucket.waiters.clear();
    bucket.withdrawn.clear();
    this.dropIfIdle(key, bucket);
  }

  private dropIfIdle(key: string, bucket: Bucket, now = this.now()): void {
    if (this.buckets.get(key) === bucket && bucket.reserved === 0 && bucket.waiters.length === 0 && this.free(bucket, now) === this.max) this.buckets.delete(key);
  }

  /** Drops the buckets whose last spent token returned, if nothing else holds them: each expiry is seen once. */
  private sweep(): void {
    for (let next = this.expiries.peek(); next !== undefined && next.at <= next.clock.now(); next = this.expiries.peek()) {
      this.expiries.shift();
      this.dropIfIdle(next.key, next.bucket, next.clock.now());
    }
  }

  /**
   * A real timer (never the scheduler's: virtual time must see no action of it) that sweeps once the
   * oldest queued token returned, unref'd; at most one per `min(perMs, 1 s)`, so a steady stream of
   * starts does not wake it per start. It arms again while the clock moves; a clock that stood still
   * meanwhile (virtual time) gets no further timer until the next start.
   */
  private armSweep(): void {
    const next = this.expiries.peek();
    if (this.sweepTimer !== undefined || next === undefined) return;
    const armedAt = next.clock.now();
    this.sweepTimer = setTimeout(() => {
      this.sweepTimer = undefined;
      this.sweep();
      if (this.expiries.peek()?.clock.now() !== armedAt) this.armSweep();
    }, Math.max(next.at - armedAt, Math.min(this.perMs, 1000)) + 1);
    this.sweepTimer.unref?.();
  }
}
