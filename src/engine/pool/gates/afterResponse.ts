import type { Cancellation, CallRecord } from '../../records/callRecord.js';
import type { Drain } from '../../../stream/drain.js';
import { Fifo } from '../../../util/fifo.js';

/** How every call the source's error stops is cancelled (rule 8d). */
export const RESPONSE_FAILED: Cancellation = Object.freeze({ reason: 'response_failed', by: undefined });

/** A call of an `after-response` tool that has not started (nor been answered): the source's error stops it. */
export const waitsForResponse = (record: CallRecord): boolean => record.status === undefined && record.tool!.start === 'after-response';

/**
 * The first gate of admission (the pool's rule 8d): a call of an `after-response` tool waits, before
 * its limits, for the call source (the model's response) to complete.
 *
 * - While the source runs, a parallel call is *parked* here, out of the queue (no slot, blocking
 *   nobody), in arrival order; an exclusive one waits at the head of the queue, and an exclusive head
 *   also waits for every parked call (`blocksExclusive`), so order holds.
 * - Once the source completed, the parked calls may start, oldest first (`take`), before the queue.
 * - If the source errors instead, none of them ever starts: the pool answers them `response_failed`
 *   (all of them taken out by `removeWhere`, and the queue's own by `waitsForResponse`), and so is a call arriving later
 *   (`cancellationOnArrival`), from a stage still working.
 */
export class AfterResponse {
  /** Parallel calls parked until the source completes, in arrival order. */
  private readonly waits = new Fifo<CallRecord>();

  /** @param source - how the call source ended (the pool's drain). */
  constructor(private readonly source: Pick<Drain, 'ended' | 'sourceFailed'>) {}

  /**
   * A call of an `after-response` tool: `held` once the source completed (it may go on to its limits);
   * else it waits, parked out of the queue if parallel, at the queue's head if exclusive.
   */
  acquire(record: CallRecord, exclusive: boolean): 'held' | 'parked' | 'waiting' {
    if (this.source.ended) return 'held';
    if (exclusive) return 'waiting'; // nothing passes it
    this.waits.push(record);
    return 'parked';
  }

  /** Some parked call may start: the source completed. */
  get ready(): boolean {
    return this.source.ended && this.waits.length > 0;
  }

  /** Parked calls came before the queue's head: an exclusive head must wait for them too. */
  get blocksExclusive(): boolean {
    return this.waits.length > 0;
  }

  /** Some call is parked here. */
  get waiting(): boolean {
    return this.waits.length > 0;
  }

  /** The oldest parked call, once the response ended, taken out to start now if `startable` accepts it. */
  take(startable: (record: CallRecord) => boolean): CallRecord | undefined {
    const next = this.source.ended ? this.waits.peek() : undefined;
    return next !== undefined && startable(next) ? this.waits.shift() : undefined;
  }

  /** The answer of a call of an `after-response` tool arriving after the source errored: it never runs. */
  cancellationOnArrival(): Cancellation | undefined {
    return this.source.sourceFailed ? RESPONSE_FAILED : undefined;
  }

  /** Removes the parked calls `picked` chooses (to be cancelled). */
  removeWhere(picked: (record: CallRecord) => boolean): CallRecord[] {
    return this.waits.removeWhere(picked);
  }

  /** Teardown: forget every parked call. */
  clear(): void {
    this.waits.clear();
  }
}
