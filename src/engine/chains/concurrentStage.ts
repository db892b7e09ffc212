import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { Abort } from '../../stream/abortScope.js';
import { Drain } from '../../stream/drain.js';
import type { CallRecord } from '../records/callRecord.js';
import { Fifo } from '../../util/fifo.js';
import { subscribeAsChild } from '../../stream/subscribeAsChild.js';

/** An admitted exclusive call: a barrier the stages before execute keep in place. */
export function isExclusiveCall(record: CallRecord): boolean {
  return record.status === undefined && record.tool!.mode === 'exclusive';
}

/**
 * What the work of one stage subscription shares: one scope, aborted when the run's signal aborts or on
 * unsubscribe, with one listener list, so a burst of pending records does not each add an abort listener
 * to the same signal. Its `signal` is made only if some work reads it.
 */
export type StageScope = Abort;

/** Work on one record; a promise when it is asynchronous. Must not throw or reject. */
export type RecordWork = (record: CallRecord, scope: StageScope) => void | PromiseLike<void>;

interface Entry {
  readonly record: CallRecord;
  readonly segment: Segment;
  done: boolean;
}

/** A barrier and the non-barrier records after it, up to the next barrier. */
interface Segment {
  /** The segment's barrier, if it starts with one (the first segment may not). */
  readonly barrier: Entry | undefined;
  barrierOut: boolean;
  /** Members not yet emitted. */
  unemitted: number;
  /** Done members waiting for the barrier (or for the segment to become the head). */
  ready: Entry[];
}

/**
 * Runs asynchronous per-record work (policies, approvals) for every record as it arrives, all at once,
 * and emits each record when its work is done — without letting it overtake what the execute stage
 * must see first:
 * - a barrier (`isBarrier` at arrival: an exclusive call) is emitted only after every earlier record;
 * - any other record is emitted only after every earlier barrier.
 * So parallel calls may pass one another (a slow approval does not hold up the parallel calls around
 * it), but never an exclusive call, in either direction: barriers keep their place for the pool.
 *
 * Records are grouped in segments (a barrier and the records after it); only the head segment emits,
 * so each record is handled in O(1). Completion and a source error wait until every record is out.
 * The `signal` given to the work aborts when the run's signal does or on unsubscribe; after
 * unsubscribe, results are ignored. Work must settle the record itself (and never reject; a rejection
 * is treated as done, leaving the record as the work left it).
 */
export function concurrentStage(
  work: RecordWork,
  isBarrier: (record: CallRecord) => boolean,
  runSignal: AbortSignal | undefined,
): MonoTypeOperatorFunction<CallRecord> {
  return (source) =>
    new Observable<CallRecord>((subscriber) => {
      const scope = new Abort();
      const onRunAbort = () => scope.abort(runSignal!.reason);
      if (runSignal?.aborted) onRunAbort();
      else runSignal?.addEventListener('abort', onRunAbort, { once: true });
      subscriber.add(() => {
        runSignal?.removeEventListener('abort', onRunAbort);
        scope.abort(new DOMException('the subscription ended', 'AbortError'));
      });

      const segments = new Fifo<Segment>();
      let tail: Segment | undefined;
      const drain = new Drain(subscriber);
      const emit = (entry: Entry) => {
        entry.segment.unemitted--;
        drain.settle();
        subscriber.next(entry.record);
      };
      let advancing = false;
      /** Emit what the head segment allows; move to the next segment when one is drained. */
      const advance = () => {
        if (advancing) return; // re-entered from downstream: the loop below re-reads the state
        advancing = true;
        try {
          for (let head = segments.peek(); head !== undefined; head = segments.peek()) {
            if (head.barrier !== undefined && !head.barrierOut) {
              if (!head.barrier.done) break;
              head.barrierOut = true;
              emit(head.barrier);
            }
            if (head.ready.length > 0) {
              const ready = head.ready;
              head.ready = [];
              for (const entry of ready) emit(entry);
              continue;
            }
            if (head.unemitted > 0) break;
            segments.shift();
            if (head === tail) tail = undefined;
          }
        } finally {
          advancing = false;
        }
        drain.closeIfDone();
      };
      const finish = (entry: Entry) => {
        if (subscriber.closed) return;
        entry.done = true;
        const { segment } = entry;
        if (entry !== segment.barrier) segment.ready.push(entry);
        if (segment === segments.peek()) advance();
      };

      subscribeAsChild(subscriber, source, {
        next(record) {
          drain.add();
          let segment = tail;
          let entry: Entry;
          if (isBarrier(record)) {
            segment = { barrier: undefined, barrierOut: false, unemitted: 1, ready: [] };
            entry = { record, segment, done: false };
            (segment as { barrier: Entry | undefined }).barrier = entry;
            segments.push(segment);
            tail = segment;
          } else {
            if (segment === undefined) {
              segment = { barrier: undefined, barrierOut: true, unemitted: 0, ready: [] };
              segments.push(segment);
              tail = segment;
            }
            segment.unemitted++;
            entry = { record, segment, done: false };
          }
          const pending = work(record, scope);
          if (pending === undefined) finish(entry);
          else pending.then(() => finish(entry), () => finish(entry));
        },
        error: (error: unknown) => drain.error(error),
        complete: () => drain.complete(),
      });
    });
}
