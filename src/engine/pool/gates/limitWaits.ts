import type { SchedulerLike } from 'rxjs';
import { describeError } from '../../../util/describe.js';
import type { CallRecord } from '../../records/callRecord.js';
import { Fifo } from '../../../util/fifo.js';
import type { Grant } from '../../../tool/schedule/permits.js';
import { limiterPermits } from '../../../tool/schedule/limiter.js';
import { rateLimiterTokens } from '../../../tool/schedule/rateLimiter.js';

/**
 * What a call waits at: a tool limit's permits (`Permits`) or a rate limit's tokens (`Tokens`). Keyed,
 * first-come: `release` hands a held permit or token back (to the oldest waiter); a rate limit's token
 * is instead `spend`t when the body starts, and returns by itself later.
 */
export interface Gate {
  tryAcquire(key: string, scheduler: SchedulerLike): boolean;
  wait(key: string, grant: Grant, scheduler: SchedulerLike): void;
  withdraw(key: string, grant: Grant): boolean;
  release(key: string): void;
  spend?(key: string, scheduler: SchedulerLike): void;
}

/** A tool's gate and the key function its calls are keyed by (undefined: every call under `''`). */
export interface GateOf {
  readonly gate: Gate;
  readonly key: ((args: never) => string) | undefined;
}

/** The gate of a call's tool `limit`. */
export const limitGate = (record: CallRecord): GateOf => {
  const { limiter, key } = record.tool!.limit!;
  return { gate: limiterPermits(limiter), key };
};

/** The gate of a call's tool `rateLimit`: its tokens on the pipeline's scheduler (one set per scheduler). */
export const rateGate = (record: CallRecord, scheduler: SchedulerLike): GateOf => {
  const { limiter, key } = record.tool!.rateLimit!;
  return { gate: rateLimiterTokens(limiter, scheduler), key };
};

/**
 * Where a call stands at its gate:
 * - `parked`: a parallel call waiting out of the queue, holding no slot (a first start, or a retry
 *   that gave its slot back); once granted it is `granted`, in `LimitWaits.granted`;
 * - `head`: an exclusive call waiting at the head of the queue; `retaking`: an exclusive call waiting
 *   in its slot for its next attempt's token (see `retake`); once granted, either is `held`;
 * - `granted`: it holds its permit or token and waits for a slot; `held`: the pool took it from there.
 */
type Standing = 'parked' | 'head' | 'retaking' | 'granted' | 'held';

/** A permit or token a call waits for or holds. */
interface Hold {
  readonly gate: Gate;
  readonly key: string;
  readonly grant: Grant;
  /** When the wait began (`record.clock()`), for `timing.durations.limit`. */
  readonly since: number;
  standing: Standing;
}

/** What `LimitWaits.acquire` found: start the call, or it waits (parked out of the queue, or at its head). */
export type Acquired = 'held' | 'parked' | 'waiting' | { readonly keyError: string };

/**
 * The pool's side of tool limits (`limit`) and rate limits (`rateLimit`), one instance for each: which
 * calls wait for a permit (or token) and which hold one.
 *
 * - A parallel call at the head of the queue whose limit is full is *parked*: taken out of the queue
 *   so the calls behind it may start, holding no slot. When its permit is granted it joins `granted`,
 *   which the pool starts before the queue (those calls came first) as soon as a slot is free.
 * - An exclusive call at the head whose limit is full *waits* there: it already waited for every
 *   earlier call (parked ones included, see `blocksExclusive`), and nothing may pass it.
 * - A permit is held from the grant until the pool releases the call's slot (or the call is cancelled
 *   before it started), and returned then: to the limiter's oldest waiter, in whichever pipeline. A
 *   rate limit's token is held from the grant until the body starts (`spend`), or returned at once if
 *   it never does.
 * - The time a call waited (from the first wait to the grant) adds to `record.limitWaitMs`.
 *
 * Permits and tokens are only ever held by running calls, by granted calls about to take a free slot,
 * and by calls waiting for a token (which time brings); a call holding a slot waits for nothing but
 * time and its own body (an exclusive call waiting in its slot for a token is alone: no call of its
 * pipeline holds or waits for one). So no mix of limits, rate limits, retries, barriers and pipelines
 * deadlocks.
 */
export class LimitWaits {
  /** Every call that waits for, or holds, a permit (token). */
  private readonly holds = new Map<CallRecord, Hold>();
  /** Calls `parked` now. */
  private parked = 0;
  /** Parked calls that got their permit, in grant order: they start when a slot is free. */
  readonly granted = new Fifo<CallRecord>();

  constructor(
    /** Called after a grant: the pool may start the call now. */
    private readonly onGrant: () => void,
    /** The gate of a record's tool on the scheduler (only asked for tools that have one). */
    private readonly gateOf: (record: CallRecord, scheduler: SchedulerLike) => GateOf,
    /** Timers (rate limits) and their clock: the pipeline's scheduler. */
    private readonly scheduler: SchedulerLike,
    /** What the gate is called in errors: `limit` or `rate limit`. */
    private readonly what: string,
  ) {}

  /** Parked calls came before the queue's head: an exclusive head must wait for them too. */
  get blocksExclusive(): boolean {
    return this.parked > 0 || this.granted.length > 0;
  }

  /** Takes `record`'s permit for the queue head if free; else it waits (parked unless `exclusive`). */
  acquire(record: CallRecord, exclusive: boolean): Acquired {
    const hold = this.holds.get(record);
    if (hold !== undefined) return hold.standing === 'held' ? 'held' : 'waiting';
    const { gate, key: keyOf } = this.gateOf(record, this.scheduler);
    let key = '';
    if (keyOf !== undefined) {
      try {
        key = keyOf(record.args as never);
      } catch (error) {
        return { keyError: `its ${this.what} key threw: ${describeError(error)}` };
      }
      if (typeof key !== 'string') return { keyError: `its ${this.what} key returned ${typeof key}, not a string` };
    }
    if (this.take(record, gate, key, exclusive ? 'head' : 'parked') === 'held') return 'held';
    return exclusive ? 'waiting' : 'parked';
  }

  /**
   * A running call needs another token before its next attempt (a retry of a rate-limited tool: every
   * body start takes one). `'held'`: it has one now (spend it as the attempt starts). Otherwise it
   * waits: an exclusive call in its slot (`'waiting'`; `resume` is called once it has the token), a
   * parallel one `'parked'`, like a first start (the pool takes its slot back meanwhile). `release`
   * withdraws the wait.
   */
  retake(record: CallRecord, exclusive: boolean, resume: () => void): 'held' | 'parked' | 'waiting' {
    const { gate, key: keyOf } = this.gateOf(record, this.scheduler);
    let key = '';
    try {
      key = keyOf === undefined ? '' : keyOf(record.args as never); // it did not throw for the first attempt
    } catch {
      key = '';
    }
    const taken = this.take(record, gate, typeof key === 'string' ? key : '', exclusive ? 'retaking' : 'parked', resume);
    return taken === 'held' ? 'held' : exclusive ? 'waiting' : 'parked';
  }

  private take(record: CallRecord, gate: Gate, key: string, standing: 'parked' | 'head' | 'retaking', resume?: () => void): 'held' | 'waiting' {
    if (gate.tryAcquire(key, this.scheduler)) {
      this.holds.set(record, { gate, key, grant: noop, since: 0, standing: 'held' });
      return 'held';
    }
    const hold: Hold = { gate, key, grant: () => this.granted_(record, hold, resume), since: record.clock(), standing };
    this.holds.set(record, hold);
    if (standing === 'parked') this.parked++;
    gate.wait(key, hold.grant, this.scheduler);
    return 'waiting';
  }

  private granted_(record: CallRecord, hold: Hold, resume: (() => void) | undefined): void {
    record.limitWaitMs += record.clock() - hold.since;
    if (hold.standing === 'parked') {
      this.parked--;
      hold.standing = 'granted';
      this.granted.push(record);
    } else {
      hold.standing = 'held';
    }
    if (resume !== undefined && hold.standing === 'held') resume();
    else this.onGrant();
  }

  /**
   * The first granted call `startable` accepts (the oldest, or — while `maxPending` holds first starts
   * back — the straggler or a retry), taken out of `granted` to start now.
   */
  takeGranted(startable: (record: CallRecord) => boolean): CallRecord | undefined {
    const record = this.granted.takeFirst(startable);
    if (record !== undefined) this.holds.get(record)!.standing = 'held';
    return record;
  }

  /** The call's body starts: a rate limit's token is spent now (a limit's permit stays held). */
  spend(record: CallRecord): void {
    const hold = this.holds.get(record);
    if (hold?.gate.spend === undefined || hold.standing !== 'held') return;
    this.holds.delete(record);
    hold.gate.spend(hold.key, this.scheduler);
  }

  /**
   * The call's slot is free, or it ends before it started or while it waits for its next attempt:
   * withdraw its wait, or return what it holds (to the oldest waiter).
   */
  release(record: CallRecord): void {
    const hold = this.holds.get(record);
    if (hold === undefined) return;
    if (hold.standing === 'granted') this.granted.takeFirst((granted) => granted === record);
    this.forget(record, hold);
  }

  /** The call no longer waits or holds: withdraw its wait, or return its permit or token. */
  private forget(record: CallRecord, hold: Hold): void {
    this.holds.delete(record);
    this.drop(hold);
  }

  /** Withdraws a wait, or returns a permit or token held (a granted call has left `granted` already). */
  private drop(hold: Hold): void {
    const { gate, key, grant, standing } = hold;
    if (standing === 'held' || standing === 'granted') return gate.release(key);
    if (standing === 'parked') this.parked--;
    gate.withdraw(key, grant);
  }

  /**
   * Removes the parked and granted calls `picked` chooses (to be cancelled), freeing what they hold —
   * not the exclusive ones, which wait in the queue or in their slot. Waits are withdrawn first, so a
   * permit or token returned here goes to a call that stays.
   */
  removeWhere(picked: (record: CallRecord) => boolean): CallRecord[] {
    const removed: CallRecord[] = [];
    for (const [record, hold] of this.holds) {
      if (hold.standing !== 'parked' || !picked(record)) continue;
      this.forget(record, hold);
      removed.push(record);
    }
    for (const record of this.granted.removeWhere(picked)) {
      this.forget(record, this.holds.get(record)!);
      removed.push(record);
    }
    return removed.sort((a, b) => a.index - b.index);
  }

  /**
   * Teardown: withdraw every wait and return every permit but those of `lingering` bodies (aborted,
   * not yet settled), which the pool returns when they settle or their grace is over: a body of a
   * shared limiter never overlaps a body started in another pipeline beyond `max`.
   */
  clear(lingering: ReadonlySet<CallRecord>): void {
    // Waits first: a permit returned below must not be granted to a wait of this pool (none is left to
    // be granted, so nothing joins `holds` while it is walked).
    for (const [record, hold] of this.holds) if (hold.standing !== 'held' && hold.standing !== 'granted') this.forget(record, hold);
    this.granted.clear();
    for (const [record, hold] of this.holds) if (!lingering.has(record)) this.forget(record, hold);
  }
}

const noop = (): void => undefined;
