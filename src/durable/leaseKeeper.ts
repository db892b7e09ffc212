import { randomId } from '../util/digest.js';
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import { isWallClock } from '../stream/clock.js';
import { describeError, describeValue } from '../util/describe.js';
import { isThenable, Later, thenOrNow, type MaybeLater } from '../util/later.js';
import type { JournalStore, TurnLease } from '../types/journal.js';
import { DurableTurnError } from './errors.js';

/**
 * The lease one run of a durable turn drives it with, from `acquire` to `release`, and the fence every
 * write of the run carries (see {@link TurnLease}).
 *
 * - **Renewal.** Every `leaseMs / 3` it renews the lease with its epoch. A renewal the store *refuses*
 *   means another process took the turn: the lease is lost at once. A renewal that *fails* (a store
 *   blip) is tried again at the next round, until the lease's own expiry passes without one succeeding:
 *   then the lease is lost too — another process may take the turn from that moment on.
 * - **Lost.** Once lost, nothing more is appended (every append, and the journal's check before a
 *   body, throws the same `lease_lost` error) and `onLost` listeners are told, once: the batch stops,
 *   aborting the bodies in flight. A lost lease is never taken again: a lease is only taken by `acquire`, once per run.
 * - **Before a body starts** (`ensureHeld`): the lease must be known to be live. When the last renewal
 *   that succeeded is older than a renewal round (the process stalled, or renewals failed), it renews
 *   first, and a refusal stops the start.
 *
 * Expiry is reckoned from the moment a renewal was *sent*, on this process's clock, so this process
 * never believes its lease lives longer than the store does (with clocks that agree).
 *
 * **Clocks.** The renewal rounds and this process's belief (`liveUntil`, the send times) follow the
 * pipeline's `scheduler`: on a real-time one the rounds are a `setInterval` that does not keep the
 * process alive, on a virtual one (a `TestScheduler`) they are scheduled actions, so a marble test sees
 * them at exact frames. The expiry the *store* keeps is its own (`Date.now()` in the stores shipped):
 * other processes read it, so it stays on the wall clock — in a virtual test it never passes during the
 * run, and a takeover by another process is not something a marble test can show.
 *
 * **Synchronous when the store is.** `acquire`, the renewals and `release` answer with a plain value
 * when the store does (`memoryJournal`, `sqliteJournal`), else with a `Later`.
 */
export class LeaseKeeper {
  readonly owner = randomId();
  #lease: TurnLease | undefined;
  /** Until when the lease is known to be live: the send time of the last renewal (or take) that succeeded, plus `leaseMs`. */
  #liveUntil = 0;
  /** Stops the renewal rounds; undefined while none run. */
  #stopRenewal: (() => void) | undefined;
  /** The renewal in flight, with a store that answers later. */
  #renewing: Later<boolean> | undefined;
  #lost: DurableTurnError | undefined;
  readonly #listeners: Array<(error: DurableTurnError) => void> = [];

  constructor(
    private readonly store: JournalStore,
    private readonly turn: string,
    private readonly leaseMs: number,
    /** The pipeline's scheduler: the renewal rounds run on it, and this process's belief reads its clock. */
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {}

  /**
   * Takes the turn's lease and starts renewing it; false when another process's lease is live. At once
   * when the store answers at once. Throws (or rejects with) the store's error.
   */
  acquire(): MaybeLater<boolean> {
    const sentAt = this.scheduler.now();
    return thenOrNow(this.store.acquire(this.turn, this.owner, this.leaseMs), (epoch) => {
      if (epoch === undefined) return false;
      if (!Number.isSafeInteger(epoch) || epoch < 1) throw new TypeError(`the journal store's acquire() answered ${describeValue(epoch)}, not an epoch (an integer of at least 1)`);
      this.#lease = Object.freeze({ turn: this.turn, owner: this.owner, epoch });
      this.#liveUntil = sentAt + this.leaseMs;
      this.#stopRenewal = every(this.scheduler, this.#round, () => void this.#renew());
      return true;
    });
  }

  /** The lease, for a write: throws the `lease_lost` error once it is lost. */
  fence(): TurnLease {
    if (this.#lost !== undefined) throw this.#lost;
    if (this.#lease === undefined) throw new Error('the turn\'s lease was not taken');
    return this.#lease;
  }

  /** The store refused a write with the lease: another process took the turn. Returns the error to throw. */
  refused(): DurableTurnError {
    return this.#lose(undefined);
  }

  /**
   * Nothing when the lease is known to be live now (the common case) or a renewal made it so at once;
   * else a `Later` that resolves once a renewal made it so. Throws (or rejects with) the `lease_lost`
   * error otherwise.
   */
  ensureHeld(): MaybeLater<void> {
    this.fence();
    if (this.scheduler.now() < this.#liveUntil - this.#round) return undefined;
    return thenOrNow(this.#renew(), () => void this.fence()); // throws once the renewal found the lease lost
  }

  /** Calls `listener` once the lease is lost (at once if it is). */
  onLost(listener: (error: DurableTurnError) => void): void {
    if (this.#lost !== undefined) listener(this.#lost);
    else this.#listeners.push(listener);
  }

  get lost(): boolean {
    return this.#lost !== undefined;
  }

  /**
   * Stops renewing and gives the lease up (unless it was lost: then it is not this process's to give).
   * Never fails; at once when the store answers at once.
   */
  release(): MaybeLater<void> {
    this.#stop();
    if (this.#lease === undefined || this.#lost !== undefined) return undefined;
    // A store that fails now (closed, broken) cannot give the lease up: it lapses after leaseMs. The
    // run's own outcome — or its journal_failed error — is what the caller must hear, not this.
    const ignored = (): undefined => undefined;
    try {
      const released = this.store.release(this.#lease);
      return isThenable(released) ? Later.from(released).then(ignored, ignored) : undefined;
    } catch {
      return undefined;
    }
  }

  get #round(): number {
    return Math.max(1, Math.floor(this.leaseMs / 3));
  }

  /** One renewal at a time; whether the lease is live (a failure is retried until the lease's expiry). Never rejects. */
  #renew(): MaybeLater<boolean> {
    if (this.#lost !== undefined) return false;
    if (this.#renewing !== undefined) return this.#renewing;
    const renewing = this.#renewOnce();
    if (!(renewing instanceof Later)) return renewing;
    this.#renewing = renewing;
    const done = () => {
      if (this.#renewing === renewing) this.#renewing = undefined;
    };
    renewing.then(done, done);
    return renewing;
  }

  #renewOnce(): MaybeLater<boolean> {
    const sentAt = this.scheduler.now();
    let renewed: boolean | PromiseLike<boolean>;
    try {
      renewed = this.store.renew(this.#lease!, this.leaseMs);
    } catch (error) {
      return this.#renewFailed(error);
    }
    if (!isThenable(renewed)) return this.#renewed(renewed, sentAt);
    return Later.from(renewed).then(
      (answer) => this.#renewed(answer, sentAt),
      (error: unknown) => this.#renewFailed(error),
    );
  }

  /** The store answered a renewal sent at `sentAt`: live for `leaseMs` from then, or refused — lost. */
  #renewed(answer: boolean, sentAt: number): boolean {
    if (answer) {
      this.#liveUntil = Math.max(this.#liveUntil, sentAt + this.leaseMs);
      return true;
    }
    this.#lose(undefined);
    return false;
  }

  /** A renewal failed (a store blip): lost once the lease's own expiry has passed, else tried at the next round. */
  #renewFailed(error: unknown): boolean {
    const now = this.scheduler.now();
    if (now >= this.#liveUntil) this.#lose(error);
    return this.#lost === undefined && now < this.#liveUntil;
  }

  #lose(cause: unknown): DurableTurnError {
    if (this.#lost !== undefined) return this.#lost;
    this.#stop();
    const why =
      cause === undefined
        ? 'another process took the turn over (its lease passed to a newer epoch)'
        : `its lease could not be renewed before it expired (${describeError(cause)}), so another process may take the turn over`;
    const lost = new DurableTurnError('lease_lost', `This run of turn ${JSON.stringify(this.turn)} stopped: ${why}. Nothing more of it is journaled or started; the process driving the turn now answers its unfinished calls.`, cause === undefined ? undefined : { cause });
    this.#lost = lost;
    for (const listener of this.#listeners.splice(0)) listener(lost);
    return lost;
  }

  #stop(): void {
    this.#stopRenewal?.();
    this.#stopRenewal = undefined;
  }
}

/**
 * Calls `fn` every `ms` on `scheduler` until the returned function is called. On a real-time scheduler
 * it is a `setInterval` that does not keep the process alive (an `asyncScheduler` action would: it
 * cannot be unref'd); on any other it is a periodic action of the scheduler, so virtual time drives it.
 */
function every(scheduler: SchedulerLike, ms: number, fn: () => void): () => void {
  if (isWallClock(scheduler)) {
    const timer = setInterval(fn, ms);
    (timer as { unref?: () => void }).unref?.();
    return () => clearInterval(timer);
  }
  // A new action each round (not `this.schedule` from inside one, which nests a virtual action in the last).
  let stopped = false;
  let round: Subscription | undefined;
  const next = () => {
    round = scheduler.schedule(() => {
      fn();
      if (!stopped) next();
    }, ms);
  };
  next();
  return () => {
    stopped = true;
    round?.unsubscribe();
  };
}
