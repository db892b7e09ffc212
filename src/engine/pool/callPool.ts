import type { Subscriber } from 'rxjs';
import type { PoolSettings } from '../settings.js';
import { DEFAULT_BATCH, type BatchOptions } from './batchOptions.js';
import type { OnError } from '../../types/tool.js';
import type { CancelReason } from '../../types/toolError.js';
import { cancelledAbort, runAborted, type Cancellation, type CallRecord } from '../records/callRecord.js';
import type { BatchCancel } from '../records/batchCancel.js';
import { Fifo } from '../../util/fifo.js';
import { Admission } from './admission.js';
import { RESPONSE_FAILED, waitsForResponse } from './gates/afterResponse.js';
import { Attempts } from './attempts.js';
import type { AttemptOutcome, AttemptsHost } from './attemptsHost.js';
import { SuspendedPlaces } from './suspendedPlaces.js';
import { Drain } from '../../stream/drain.js';
import type { ReorderWindow } from '../../stream/reorderWindow.js';

/**
 * The state machine behind `executeCalls`, one per subscription: a bounded pool of slots, exclusive
 * calls as barriers, cancellation and teardown. What a call must pass before it takes a slot (the
 * source's end, its limit's permit, its rate limit's token, the `maxPending` bound) is `Admission`'s;
 * a call's life in its slot (start checks, attempts, time limits, grace, retries) is `Attempts`', which
 * tells the pool how it ended (`ended`). Each rule is stated beside the code that keeps it (5, 8a, 8c,
 * 8d: `Admission`; 4, 8b, 9: `Attempts`).
 *
 * Nothing recurses per call: `pump` is re-entrant-safe (a nested call returns and the running loop picks
 * up the work), and cancelling a backlog of any size is one loop, so synchronous bodies and 20k-call
 * backlogs neither overflow the stack nor stall.
 */
export class CallPool implements AttemptsHost {
  /** Records waiting for a slot, in arrival order. */
  private readonly queue = new Fifo<CallRecord>();
  /** Records that hold a slot. */
  private readonly running = new Set<CallRecord>();
  /** An exclusive call holds the pool. */
  private exclusiveRunning = false;
  /** Received records whose result is not yet emitted (in flight), and how the source ended. */
  private readonly drain: Drain;
  /** Set once everything is cancelled (the run's signal). */
  private cancellation: Cancellation | undefined = undefined;
  /** Suspended calls (durable turns) hold their place: the calls that may not overtake them are suspended too. */
  private readonly suspended = new SuspendedPlaces();
  /** What a call must pass before it takes a slot (rules 5, 8a, 8c, 8d). */
  private readonly admission: Admission;
  private readonly attempts: Attempts;
  /** `pump` is on the stack. */
  private pumping = false;
  /** `release` is on the stack: a waiter granted the permit it gives back starts at the pump after it. */
  private releasing = false;
  /** The output completed, errored or was unsubscribed: nothing starts, bodies' reports are late. */
  closed = false;
  private readonly onAbort = () => this.cancelRest('aborted', undefined);
  /** A parked call was granted, or a result the bound waited for arrived: pump, unless a release will. */
  private readonly onGrant = () => {
    if (!this.releasing) this.pump();
  };

  constructor(
    private readonly settings: PoolSettings,
    private readonly destination: Subscriber<CallRecord>,
    private readonly signal: AbortSignal | undefined,
    /** Told when the rest is cancelled, so calls still in the policy stages are cancelled too. */
    private readonly batch: BatchCancel,
    /** What a cancel-rest reaches, and when the output completes (rule 8). */
    private readonly options: BatchOptions = DEFAULT_BATCH,
    /** The reorder window after the pool, for `maxPending` (see `Admission`). */
    window?: ReorderWindow<{ readonly index: number }>,
  ) {
    this.drain = new Drain(destination);
    this.admission = new Admission(settings, this.drain, this.running, this.onGrant, window);
    this.attempts = new Attempts(this, settings);
    if (signal?.aborted) this.onAbort();
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /**
   * 1. A record that arrives finished (intake error, denial) or cancelled (its turn, or everything) is
   *    emitted at once and holds no slot; others queue in arrival order (see `pump`).
   * 7a. A call a layer answered in place at `received` (a resume's `outcome_unknown`: it had started
   *    before a crash) waits for its turn in the queue and fails there, as a body failure of its mode
   *    would (never cancelling calls before it). Unless its tool is gone from this pipeline: with no
   *    mode to fail as, it is emitted at once.
   */
  next(record: CallRecord): void {
    if (this.closed) return;
    this.drain.add();
    // Cancelled on arrival: everything (the run's signal), or its turn while the batch remembers it.
    const cancellation = record.status === undefined ? (this.batch.cancellationOf(record) ?? this.admission.cancellationOnArrival(record)) : undefined;
    if (record.status === 'suspended') {
      this.suspended.hold(record);
      this.emit(record);
    } else if (record.status === undefined && cancellation === undefined && this.suspended.stopped(record)) {
      this.emit(record);
    } else if (record.verdict === 'in-place' && record.tool !== undefined && cancellation === undefined) {
      // A resumed call whose body ran, maybe, before a crash: it fails where it would have run.
      this.queue.push(record);
      this.pump();
    } else if (record.status !== undefined) {
      this.emit(record);
    } else if (cancellation !== undefined) {
      record.cancel(cancellation);
      this.emit(record);
    } else {
      this.queue.push(record);
      this.pump();
    }
  }

  error(error: unknown): void {
    this.drain.end({ error });
    if (!this.closed) this.cancelAfterResponse();
    this.complete();
  }

  /** 6. Completion waits for every received call's result; a source error is forwarded after them. */
  complete(): void {
    if (!this.drain.ended) this.drain.end('complete'); // error() ends here too, its error recorded
    if (this.admission.waitsForResponse || this.queue.length > 0) this.pump(); // after-response calls may start now
    this.closeIfDone();
  }

  /** 8d. The source errored: the `after-response` calls not started never will (`response_failed`). */
  private cancelAfterResponse(): void {
    const waiting = [...this.admission.cancelAfterResponse(), ...this.queue.removeWhere(waitsForResponse)];
    for (const record of waiting) record.cancel(RESPONSE_FAILED);
    for (const record of waiting) this.emit(record);
    this.pump(); // exclusive calls waiting behind them may start
  }

  /** The call's time in its slot ended so (see `AttemptOutcome`). */
  ended(record: CallRecord, outcome: AttemptOutcome): void {
    if (outcome === 'answered') {
      this.emit(record); // first: counted as waiting before its slot is refilled (rule 5)
      return this.pump();
    }
    if (outcome === 'failed') this.failed(record);
    if (outcome === 'failed' || outcome === 'freed') return this.pump();
    if (outcome === 'suspended') return this.suspend(record);
    // 'late': after teardown, a body that settled returns the limit's permit it kept (rule 7).
    if (this.closed) this.admission.settledLate(record);
  }

  /**
   * 9. A suspended call cancels nothing (it did not fail); it holds its place like a call the guard
   *    suspended, and the queued calls that may not overtake it are suspended too, before anything starts.
   */
  private suspend(record: CallRecord): void {
    this.suspended.hold(record);
    const behind = this.queue.removeWhere((queued) => this.suspended.stopped(queued));
    this.pump();
    this.emit(record);
    for (const queued of behind) this.emit(queued);
  }

  /**
   * 3. Cancel every unfinished call of `by`'s turn but `by` (of every turn when the run's signal aborted):
   *    queued ones get a `cancelled` result without starting, running ones get theirs now and see their
   *    signal abort (rule 4), later arrivals are cancelled on arrival (`CancelledTurns`). Other turns go on.
   * 8. In a batch whose `cancelRest` is `none` (a program's sub-calls: the program decides) nothing but
   *    the run's signal cancels the rest.
   */
  cancelRest(reason: CancelReason, by: CallRecord | undefined): void {
    if (this.cancellation !== undefined || this.closed) return;
    // 'aborted' comes only from the run's signal, whose reason the results carry.
    const cancellation: Cancellation = reason === 'aborted' ? runAborted(this.signal?.reason) : { reason, by };
    let reached: (record: CallRecord) => boolean;
    if (reason === 'aborted') {
      this.cancellation = cancellation;
      this.batch.cancelAll(cancellation);
      reached = () => true;
    } else {
      if (this.options.cancelRest === 'none') return; // whoever runs the batch decides
      const turn = by?.turn;
      if (!this.batch.cancelTurn(turn, cancellation)) return; // cancelled already
      reached = (record) => record.turn === turn;
    }
    const cancelled: CallRecord[] = [];
    for (const record of this.running) {
      if (record === by || record.status !== undefined || !reached(record)) continue;
      record.endedAt = record.clock();
      record.cancel(cancellation);
      cancelled.push(record);
    }
    // Abort after deciding their results: an abort listener may settle a body synchronously.
    const abortReason = cancelled.length > 0 ? cancelledAbort(cancellation) : undefined;
    for (const record of cancelled) this.attempts.stop(record, abortReason);
    const queued = this.queue.removeWhere(reached);
    // Calls parked at a gate: what they hold is returned (a permit, when parked on a rate limit). A parked retry's run ends.
    for (const record of this.admission.removeWhere(reached)) {
      if (record.started) {
        record.endedAt = record.clock();
        this.release(record);
      } else {
        this.admission.withdraw(record);
      }
      record.cancel(cancellation);
      cancelled.push(record);
    }
    for (const record of queued) {
      this.admission.withdraw(record); // an exclusive head waiting for its limit or token: it held nothing else
      if (record.status === undefined) record.cancel(cancellation); // an outcome_unknown keeps its outcome
      cancelled.push(record);
    }
    for (const record of cancelled) this.emit(record);
    this.pump(); // the calls of other turns may start in the slots just freed
  }

  /**
   * 7. Teardown (unsubscribe or completion) aborts every body still holding a slot and clears every timer
   *    and listener. A body that did not stop at once keeps its limit's permit until it settles (`late`)
   *    or its grace is over.
   */
  close(): void {
    this.closed = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    const reason = this.running.size > 0 ? new DOMException('the subscription ended', 'AbortError') : undefined;
    const unstopped = new Set<CallRecord>();
    for (const record of this.running) {
      const run = record.run!;
      run.clearTimer();
      // A no-op for bodies already aborted (and stopped) by a timeout or cancel.
      if (!run.stop(reason) && !run.done) unstopped.add(record);
    }
    this.running.clear();
    this.attempts.close();
    this.queue.clear();
    this.admission.clear(unstopped); // their limits' permits stay held until they settle, or for a grace
  }

  /**
   * 2. Starts the queue's head while the rules allow: a parallel call when no exclusive call runs and
   *    fewer than `concurrency` calls hold a slot; an exclusive call when nothing runs. The head blocks
   *    those behind it, so a barrier is never overtaken. Calls that left the queue to wait at a gate of
   *    admission (8a, 8c, 8d) came before it: once granted they start first, and an exclusive head waits
   *    for every one of them (`blocksExclusive`).
   */
  private pump(): void {
    if (this.pumping) return; // the loop below is on the stack and will see the new state
    this.pumping = true;
    try {
      const { queue, running, settings, admission } = this;
      while (!this.closed && this.cancellation === undefined) {
        if (admission.granted) {
          if (this.exclusiveRunning || running.size >= settings.concurrency) break;
          const record = admission.takeGranted();
          if (record !== undefined) {
            const acquired = admission.admit(record, false);
            if (acquired === 'held') this.start(record, false);
            else if (acquired === 'failed') this.failed(record); // its gate's key could not be computed
            continue;
          }
          // `maxPending` holds them back (rule 5): only the straggler may start, maybe the queue's head.
        }
        const head = queue.peek();
        if (head === undefined) break;
        const exclusive = head.tool!.mode === 'exclusive';
        const blocked = exclusive ? running.size > 0 || admission.blocksExclusive : this.exclusiveRunning || running.size >= settings.concurrency;
        if (blocked || !admission.startable(head)) break;
        if (head.status !== undefined) {
          queue.shift();
          this.failed(head); // answered in place, at its turn: as a failure of its mode (rule 7a)
          continue;
        }
        const acquired = admission.admit(head, exclusive);
        if (acquired === 'waiting') break; // an exclusive head: nothing passes it
        queue.shift(); // started, parked at a gate, or failed
        if (acquired === 'held') this.start(head, exclusive);
        else if (acquired === 'failed') this.failed(head);
      }
    } finally {
      this.pumping = false;
    }
  }

  private start(record: CallRecord, exclusive: boolean): void {
    this.running.add(record);
    if (record.started) return this.attempts.again(record); // a retry back with its token (see `retake`)
    if (exclusive) this.exclusiveRunning = true;
    this.attempts.start(record, exclusive);
  }

  spend(record: CallRecord): void {
    this.admission.spend(record);
  }

  /** An exclusive retry waits for its token in its slot (alone: nothing of its pool holds or waits for one). */
  retake(record: CallRecord, resume: () => void): 'held' | 'waiting' | 'parked' {
    const token = this.admission.retake(record, record.run!.exclusive, resume);
    if (token === 'parked') {
      this.running.delete(record); // back through `granted`, ahead of the queue, once it has its token
      this.pump();
    }
    return token;
  }

  holdsSlot(record: CallRecord): boolean {
    return this.running.has(record);
  }

  /** 3. A failed call cancels the rest of its turn if its `onError` (the tool's, the pipeline's, its mode's) says so. */
  private failed(record: CallRecord): void {
    const tool = record.tool!;
    const onError: OnError = tool.onError ?? this.settings.onError ?? (tool.mode === 'exclusive' ? 'cancel-rest' : 'continue');
    if (onError === 'cancel-rest') this.cancelRest('sibling_failed', record);
    this.emit(record);
  }

  release(record: CallRecord): void {
    const run = record.run!;
    run.done = true;
    run.clearTimer();
    this.running.delete(record);
    if (run.exclusive) this.exclusiveRunning = false;
    // Last: the permit (or a token the body never spent) may be granted to a waiter. It starts at the
    // pump that follows every release — after the call's result, if it has one, is counted (rule 5).
    this.releasing = true;
    this.admission.release(record);
    this.releasing = false;
    if (this.options.complete === 'when-settled') this.closeIfDone();
  }

  private emit(record: CallRecord): void {
    if (this.closed) return;
    this.drain.settle();
    this.batch.answered(record);
    this.admission.answered(record.index);
    // Delivering may start and finish other calls (the window wakes the pump when a result it waited
    // for arrives), and even complete the output.
    this.destination.next(record);
    this.closeIfDone();
  }

  /** 6, 8. Done once every received call was answered — `when-settled`, once every slot is free too. */
  private closeIfDone(): void {
    if (this.closed || !this.drain.idle) return;
    if (this.options.complete === 'when-settled' && this.running.size > 0) return; // bodies still winding down
    this.closed = true; // before the output ends: the pool's own flag (teardown sets it too), not the drain's
    this.drain.close();
  }
}
