import { randomUUID } from 'node:crypto';
import { describeError, describeValue } from '../util/describe.js';
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
 */
export class LeaseKeeper {
  readonly owner = randomUUID();
  #lease: TurnLease | undefined;
  /** Until when the lease is known to be live: the send time of the last renewal (or take) that succeeded, plus `leaseMs`. */
  #liveUntil = 0;
  #renewal: ReturnType<typeof setInterval> | undefined;
  #renewing: Promise<boolean> | undefined;
  #lost: DurableTurnError | undefined;
  readonly #listeners: Array<(error: DurableTurnError) => void> = [];

  constructor(
    private readonly store: JournalStore,
    private readonly turn: string,
    private readonly leaseMs: number,
  ) {}

  /** Takes the turn's lease and starts renewing it; false when another process's lease is live. */
  async acquire(): Promise<boolean> {
    const sentAt = Date.now();
    const epoch = await this.store.acquire(this.turn, this.owner, this.leaseMs);
    if (epoch === undefined) return false;
    if (!Number.isSafeInteger(epoch) || epoch < 1) throw new TypeError(`the journal store's acquire() answered ${describeValue(epoch)}, not an epoch (an integer of at least 1)`);
    this.#lease = Object.freeze({ turn: this.turn, owner: this.owner, epoch });
    this.#liveUntil = sentAt + this.leaseMs;
    this.#renewal = setInterval(() => void this.#renew(), this.#round);
    (this.#renewal as { unref?: () => void }).unref?.();
    return true;
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
   * Nothing when the lease is known to be live now (the common case, without a promise); else a promise
   * that resolves once a renewal made it so. Throws (or rejects with) the `lease_lost` error otherwise.
   */
  ensureHeld(): Promise<void> | undefined {
    this.fence();
    if (Date.now() < this.#liveUntil - this.#round) return undefined;
    return this.#renew().then(() => void this.fence()); // throws once the renewal found the lease lost
  }

  /** Calls `listener` once the lease is lost (at once if it is). */
  onLost(listener: (error: DurableTurnError) => void): void {
    if (this.#lost !== undefined) listener(this.#lost);
    else this.#listeners.push(listener);
  }

  get lost(): boolean {
    return this.#lost !== undefined;
  }

  /** Stops renewing and gives the lease up (unless it was lost: then it is not this process's to give). */
  async release(): Promise<void> {
    this.#stop();
    if (this.#lease === undefined || this.#lost !== undefined) return;
    try {
      await this.store.release(this.#lease);
    } catch {
      // A store that fails now (closed, broken) cannot give the lease up: it lapses after leaseMs. The
      // run's own outcome — or its journal_failed error — is what the caller must hear, not this.
    }
  }

  get #round(): number {
    return Math.max(1, Math.floor(this.leaseMs / 3));
  }

  /** One renewal at a time; resolves whether the lease is live (a failure is retried until the lease's expiry). */
  #renew(): Promise<boolean> {
    if (this.#lost !== undefined) return Promise.resolve(false);
    if (this.#renewing !== undefined) return this.#renewing;
    const renewing = this.#renewOnce();
    this.#renewing = renewing;
    void renewing.finally(() => {
      if (this.#renewing === renewing) this.#renewing = undefined;
    });
    return renewing;
  }

  async #renewOnce(): Promise<boolean> {
    const sentAt = Date.now();
    try {
      if (await this.store.renew(this.#lease!, this.leaseMs)) {
        this.#liveUntil = Math.max(this.#liveUntil, sentAt + this.leaseMs);
        return true;
      }
      this.#lose(undefined);
    } catch (error) {
      if (Date.now() >= this.#liveUntil) this.#lose(error);
    }
    return this.#lost === undefined && Date.now() < this.#liveUntil;
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
    clearInterval(this.#renewal);
    this.#renewal = undefined;
  }
}
