import type { SchedulerLike } from 'rxjs';
import { describeError } from './describe.js';
import type { CallRecord } from './callRecord.js';
import { Fifo } from './fifo.js';
import type { Grant } from './permits.js';

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

/** A permit or token a call waits for or holds. */
interface Hold {
  readonly gate: Gate;
  readonly key: string;
  readonly grant: Grant;
  /** When the wait began (`performance.now()`), for `timing.durations.limit`. */
  readonly since: number;
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
 * Permits are only ever held by running calls or by granted calls about to take a free slot (and, with
 * a rate limit too, by calls waiting for a token, which time brings), and the calls a permit waiter
 * waits for never wait for it, so no mix of limits, rate limits, barriers and pipelines deadlocks.
 */
export class LimitWaits {
  /** Calls waiting for a permit: parked parallel calls and at most one exclusive call at the queue head. */
  private readonly waiting = new Map<CallRecord, Hold>();
  /** Running calls waiting for a token before their next attempt (`retake`): they keep their slot. */
  private readonly retaking = new Map<CallRecord, Hold>();
  /** Parked calls waiting now (so excluding the exclusive head). */
  private parked = 0;
  /** Calls holding a permit (granted or running). */
  private readonly holding = new Map<CallRecord, Hold>();
  /** Parked calls that got their permit, in grant order: they start when a slot is free. */
  readonly granted = new Fifo<CallRecord>();

  constructor(
    /** Called after a grant: the pool may start the call now. */
    private readonly onGrant: () => void,
    /** The gate of a record's tool (only asked for tools that have one). */
    private readonly gateOf: (record: CallRecord) => GateOf,
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
    if (this.holding.has(record)) return 'held';
    if (this.waiting.has(record)) return 'waiting';
    const { gate, key: keyOf } = this.gateOf(record);
    let key = '';
    if (keyOf !== undefined) {
      try {
        key = keyOf(record.args as never);
      } catch (error) {
        return { keyError: `its ${this.what} key threw: ${describeError(error)}` };
      }
      if (typeof key !== 'string') return { keyError: `its ${this.what} key returned ${typeof key}, not a string` };
    }
    if (gate.tryAcquire(key, this.scheduler)) {
      this.holding.set(record, { gate, key, grant: noop, since: 0 });
      return 'held';
    }
    const hold: Hold = { gate, key, grant: () => this.granted_(record, hold, exclusive), since: performance.now() };
    this.waiting.set(record, hold);
    if (!exclusive) this.parked++;
    gate.wait(key, hold.grant, this.scheduler);
    return exclusive ? 'waiting' : 'parked';
  }

  /**
   * A running call needs another token before its next attempt (a retry of a rate-limited tool: every
   * body start takes one). `'held'`: it has one now (spend it as the attempt starts). `'waiting'`:
   * `resume` is called once one is granted — the call keeps its slot meanwhile, and `forget` (its slot
   * released: cancelled, closed) withdraws the wait.
   */
  retake(record: CallRecord, resume: () => void): 'held' | 'waiting' {
    if (this.holding.has(record)) return 'held';
    if (this.retaking.has(record)) return 'waiting';
    const { gate, key: keyOf } = this.gateOf(record);
    let key = '';
    try {
      key = keyOf === undefined ? '' : keyOf(record.args as never); // it did not throw for the first attempt
    } catch {
      key = '';
    }
    if (gate.tryAcquire(key, this.scheduler)) {
      this.holding.set(record, { gate, key, grant: noop, since: 0 });
      return 'held';
    }
    const hold: Hold = {
      gate,
      key,
      grant: () => {
        this.retaking.delete(record);
        this.holding.set(record, hold);
        record.limitWaitMs += performance.now() - hold.since;
        resume();
      },
      since: performance.now(),
    };
    this.retaking.set(record, hold);
    gate.wait(key, hold.grant, this.scheduler);
    return 'waiting';
  }

  private granted_(record: CallRecord, hold: Hold, exclusive: boolean): void {
    this.waiting.delete(record);
    this.holding.set(record, hold);
    record.limitWaitMs += performance.now() - hold.since;
    if (!exclusive) {
      this.parked--;
      this.granted.push(record);
    }
    this.onGrant();
  }

  /** The call's slot is free (or it is cancelled before it started): return its permit, if it holds one. */
  release(record: CallRecord): void {
    const hold = this.holding.get(record);
    if (hold === undefined) return;
    this.holding.delete(record);
    hold.gate.release(hold.key);
  }

  /** The call's body starts: a rate limit's token is spent now (a limit's permit stays held). */
  spend(record: CallRecord): void {
    const hold = this.holding.get(record);
    if (hold?.gate.spend === undefined) return;
    this.holding.delete(record);
    hold.gate.spend(hold.key, this.scheduler);
  }

  /**
   * The call ends before it started (a queue head cancelled while it waits): withdraw its wait, or
   * return the permit it was granted.
   */
  forget(record: CallRecord): void {
    const retake = this.retaking.get(record);
    if (retake !== undefined) {
      this.retaking.delete(record);
      retake.gate.withdraw(retake.key, retake.grant);
      return;
    }
    const hold = this.waiting.get(record);
    if (hold === undefined) return this.release(record);
    this.waiting.delete(record);
    hold.gate.withdraw(hold.key, hold.grant);
  }

  /** Removes the parked and granted calls `picked` chooses (to be cancelled), freeing what they hold. */
  removeWhere(picked: (record: CallRecord) => boolean): CallRecord[] {
    const removed = this.granted.removeWhere(picked);
    for (const record of removed) this.release(record);
    for (const [record, hold] of this.waiting) {
      if (record.tool!.mode === 'exclusive' || !picked(record)) continue; // the exclusive one waits in the queue
      this.waiting.delete(record);
      this.parked--;
      hold.gate.withdraw(hold.key, hold.grant);
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
    for (const [, hold] of [...this.waiting, ...this.retaking]) hold.gate.withdraw(hold.key, hold.grant);
    this.waiting.clear();
    this.retaking.clear();
    this.parked = 0;
    this.granted.clear();
    for (const record of [...this.holding.keys()]) if (!lingering.has(record)) this.release(record);
  }
}

const noop = (): void => undefined;
