import type { AdmissionSettings } from '../settings.js';
import type { Cancellation, CallRecord } from '../records/callRecord.js';
import type { Drain } from '../../stream/drain.js';
import { LimitWaits, limitGate, rateGate } from './gates/limitWaits.js';
import { AfterResponse } from './gates/afterResponse.js';
import type { ReorderWindow } from '../../stream/reorderWindow.js';

/**
 * What `admit` found: `held` (every gate passed, or none to pass), `parked` (the call left the queue to
 * wait at a gate), `waiting` (an exclusive call, at the queue's head), or `failed` (its limit's or rate
 * limit's key could not be computed: the call has its `tool_error` result and never runs).
 */
export type Admitted = 'held' | 'parked' | 'waiting' | 'failed';

/**
 * What a call must pass before its body may start, for one pool: an ordered list of gates, each passed
 * holding what the ones before it gave —
 * 1. `after-response` (rule 8d): the call source completed (`AfterResponse`);
 * 2. `limit` (rule 8a): a permit of the tool's limit (`LimitWaits`);
 * 3. `rateLimit` (rule 8c): a token of the tool's rate limit, taken only while holding the permit;
 * — and the `maxPending` bound (rule 5) over every first start, whichever way the call came, answered
 * by the reorder window the pool shares with the reorder stage after it (`ReorderWindow`).
 *
 * A call that must wait at a gate either *parks* there, out of the pool's queue (a parallel call: no slot,
 * blocking nobody), or *waits* at the queue's head (an exclusive call: nothing passes it). Parked calls
 * came before the queue's head, so once *granted* they start first (`takeGranted`, in the pool's `pump`),
 * and an exclusive head waits for them (`blocksExclusive`): barriers keep their meaning.
 *
 * A call of a tool with none of these gates touches none: `admit` and `release` read the tool's three
 * properties and return.
 *
 * @example
 * ```ts
 * const admission = new Admission(settings, drain, running, pump, window);
 * if (admission.startable(head) && admission.admit(head, exclusive) === 'held') start(head);
 * // later: admission.spend(record) at body start, admission.release(record) when its slot is free
 * ```
 */
export class Admission {
  private readonly responses: AfterResponse;
  /** Calls waiting for, or holding, a permit of their tool's limit. */
  private readonly limits: LimitWaits;
  /** Calls waiting for, or holding, a token of their tool's rate limit (after their limit's permit). */
  private readonly rates: LimitWaits;

  /**
   * @param source - how the call source ended (the pool's drain), for `after-response`.
   * @param running - the calls holding a slot (the pool's): when none does, the bound holds nobody back.
   * @param onGrant - a parked call was granted, a permit freed, or a result the bound waited for
   *   arrived: the pool may start something now.
   * @param window - the reorder window after the pool, for `maxPending`; none when nothing reorders the
   *   pool's results (a program's sub-calls): then no result waits, and the bound holds nothing back.
   */
  constructor(
    private readonly settings: AdmissionSettings,
    source: Pick<Drain, 'ended' | 'sourceFailed'>,
    private readonly running: ReadonlySet<CallRecord>,
    onGrant: () => void,
    private readonly window?: ReorderWindow<{ readonly index: number }>,
  ) {
    this.responses = new AfterResponse(source);
    this.limits = new LimitWaits(onGrant, limitGate, settings.scheduler, 'limit');
    this.rates = new LimitWaits(onGrant, rateGate, settings.scheduler, 'rate limit');
    window?.wakes(onGrant);
  }

  /**
   * 5. While `maxPending` results wait behind an earlier one not yet out (in the reorder buffer, or on
   *    their way to it through the stages after the pool), only the earliest call not yet out may start
   *    — or, when nothing runs and no result is on its way, any — whichever way it came
   *    (`ReorderWindow`): memory stays bounded behind a straggler. A retry's next attempt is held back by
   *    nothing.
   */
  readonly startable = (record: CallRecord): boolean =>
    record.started || this.window === undefined || this.window.mayStart(record.index, this.running.size === 0);

  /** The result of `index` leaves the pool: it is outstanding in the window until the reorder gives it out. */
  answered(index: number): void {
    this.window?.answered(index);
  }

  /** Some parked call was granted (a permit, a token, or the source's end) and waits for a slot. */
  get granted(): boolean {
    return this.rates.granted.length > 0 || this.limits.granted.length > 0 || this.responses.ready;
  }

  /**
   * The granted call to start next, if the bound lets one: a call granted at a later gate holds more and
   * goes first. Undefined while `maxPending` holds them all back (only the straggler, maybe the queue's
   * head, may start then).
   */
  takeGranted(): CallRecord | undefined {
    const { startable } = this;
    return this.rates.takeGranted(startable) ?? this.limits.takeGranted(startable) ?? this.responses.take(startable);
  }

  /** Calls parked at a gate came before the queue's head: an exclusive head waits for every one of them. */
  get blocksExclusive(): boolean {
    return this.limits.blocksExclusive || this.rates.blocksExclusive || this.responses.blocksExclusive;
  }

  /**
   * Takes, in order, the gates a call must pass, as far as it can (see `Admitted`). A gate passed before
   * is passed again at once (a granted call comes back through here).
   * 8d. First, an `after-response` tool's call waits for the source to complete (`AfterResponse`).
   * 8a. Then its tool's `limit` permit (`LimitWaits`): a parallel call whose limit is full is parked (no
   *    slot, blocking nobody) until granted; an exclusive one waits at the head.
   * 8c. Then, holding that, its `rateLimit` token the same way, so no token goes to a call that cannot
   *    start; it is spent when the body starts (`spend`), returned if it never does (`release`).
   */
  admit(record: CallRecord, exclusive: boolean): Admitted {
    const { start, limit, rateLimit } = record.tool!;
    if (start === 'after-response') {
      const responded = this.responses.acquire(record, exclusive);
      if (responded !== 'held') return responded;
    }
    const permit = limit === undefined ? 'held' : this.limits.acquire(record, exclusive);
    if (permit !== 'held' || rateLimit === undefined) return typeof permit === 'string' ? permit : keyFailed(record, permit.keyError);
    const token = this.rates.acquire(record, exclusive);
    if (typeof token === 'string') return token;
    this.limits.release(record); // its key failed: it holds nothing
    return keyFailed(record, token.keyError);
  }

  /** A rate-limited tool's body starts: its token is spent (a limit's permit stays held). */
  spend(record: CallRecord): void {
    this.rates.spend(record);
  }

  /**
   * 8c. A retry of a rate-limited tool takes a token of its own (see `LimitWaits.retake`): an exclusive
   *    one waits in its slot (alone: nothing of its pool holds or waits for one), a parallel one parks.
   */
  retake(record: CallRecord, exclusive: boolean, resume: () => void): 'held' | 'waiting' | 'parked' {
    return this.rates.retake(record, exclusive, resume);
  }

  /**
   * The call's slot is free, or it ended before its body started: the permit, and a token its body never
   * spent (or a retry's wait for one), go back — to the oldest waiter, which may start at once.
   */
  release(record: CallRecord): void {
    const { limit, rateLimit } = record.tool!;
    if (limit !== undefined) this.limits.release(record);
    if (rateLimit !== undefined) this.rates.release(record);
  }

  /** A call waiting at the queue's head (or out of it, not started) is answered: its waits are withdrawn. */
  withdraw(record: CallRecord): void {
    this.rates.release(record);
    this.limits.release(record);
  }

  /**
   * The parked and granted calls `picked` chooses (to be cancelled), taken out of every gate, in this
   * order: after-response, rate limit, limit. What they hold past the gate they were taken from stays
   * theirs until `withdraw` (or the pool's `release`, for a parked retry).
   */
  removeWhere(picked: (record: CallRecord) => boolean): CallRecord[] {
    const responded = this.responses.removeWhere(picked);
    const parked = [...this.rates.removeWhere(picked), ...this.limits.removeWhere(picked)];
    return responded.length === 0 ? parked : [...responded, ...parked];
  }

  /** 8d. The source errored: every parked `after-response` call, taken out to be answered `response_failed`. */
  cancelAfterResponse(): CallRecord[] {
    return this.responses.removeWhere(() => true);
  }

  /** A call arriving after the source errored (from a stage still working): its answer, if the error stops it. */
  cancellationOnArrival(record: CallRecord): Cancellation | undefined {
    return record.tool!.start === 'after-response' ? this.responses.cancellationOnArrival() : undefined;
  }

  /** Some `after-response` call is parked: the source's end may let it start. */
  get waitsForResponse(): boolean {
    return this.responses.waiting;
  }

  /**
   * Teardown: withdraw every wait and return every permit and token but the permits of bodies that did
   * not stop when aborted (`unstopped`).
   * 7. A body that did not stop at once keeps its limit's permit until it settles (`settledLate`) or its
   *    grace is over, so a body of a shared limiter never overlaps one started elsewhere beyond `max`.
   */
  clear(unstopped: ReadonlySet<CallRecord>): void {
    this.responses.clear();
    this.limits.clear(unstopped); // only the limited ones hold a permit
    this.rates.clear(NO_RECORDS); // a lingering body spent its token when it started
    const grace = this.settings.abortGraceMs;
    if (grace === Infinity) return;
    for (const record of unstopped) {
      if (record.tool!.limit !== undefined) record.run!.timer = this.settings.scheduler.schedule(() => this.limits.release(record), grace);
    }
  }

  /** 7. After teardown, a body that settled returns the limit's permit it kept (its grace's timer goes). */
  settledLate(record: CallRecord): void {
    if (record.tool!.limit === undefined) return;
    record.run!.clearTimer();
    this.limits.release(record);
  }
}

const NO_RECORDS: ReadonlySet<CallRecord> = new Set();

/** A call whose limit (or rate limit) key could not be computed: it fails without running, as a body failure would. */
function keyFailed(record: CallRecord, why: string): 'failed' {
  record.fail('error', { code: 'tool_error', message: `Tool "${record.name}" could not start: ${why}.`, cause: undefined });
  return 'failed';
}
