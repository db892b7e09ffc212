import { randomUUID } from 'node:crypto';
import type { Subscriber } from 'rxjs';
import type { PipelineSettings } from '../settings.js';
import type { AttemptError } from '../../types/retry.js';
import type { OnError } from '../../types/tool.js';
import type { CancelReason } from '../../types/toolError.js';
import { describeError } from '../../util/describe.js';
import type { Cancellation, CallRecord } from '../records/callRecord.js';
import type { BatchCancel } from '../records/batchCancel.js';
import { BodyRun } from './bodyRun.js';
import { BodySuspended } from './bodySuspended.js';
import { ExecutionContext } from './executionContext.js';
import { Deadlines } from './deadlines.js';
import { Fifo } from '../../util/fifo.js';
import { LimitWaits, type Acquired, type GateOf } from './limitWaits.js';
import { limiterPermits } from '../../tool/schedule/limiter.js';
import { rateLimiterTokens } from '../../tool/schedule/rateLimiter.js';
import { OutcomeUnknown } from './outcomeUnknown.js';
import { invokeBody } from './invokeBody.js';
import { runStartChecks, type StartCheckEntry, type StartRefusal } from '../chains/startChecks.js';
import { refuseStart } from '../chains/refuseStart.js';
import { ChainsByTool } from '../chains/chainsByTool.js';
import { runExecuteChain, type ExecuteFailure, type ExecuteHost } from '../chains/executeChain.js';
import { refuseExecute } from '../chains/refuseExecute.js';
import { ResultOrder } from './resultOrder.js';
import { SuspendedPlaces } from './suspendedPlaces.js';
import { Drain } from '../../stream/drain.js';
import { mayRetry, retryDelay } from '../../tool/schedule/retry.js';

/**
 * The state machine behind `executeCalls`, one per subscription: a bounded pool of running bodies,
 * exclusive calls as barriers, cancellation, timeouts and teardown.
 *
 * 1. A record that arrives finished (intake error, denial) is emitted at once and holds no slot.
 * 2. Other records queue in arrival order. `pump` starts the head while the rules allow: a parallel call
 *    when no exclusive call runs and fewer than `concurrency` bodies run; an exclusive call when nothing
 *    runs. The head blocks those behind it, so a barrier is never overtaken.
 * 3. A body's value or failure decides the result and frees the slot. A failure (throw, rejection,
 *    timeout) under `'cancel-rest'` (the default of exclusive tools) cancels every unfinished call of
 *    its turn: queued ones and later arrivals of that turn get `cancelled` results without starting;
 *    running ones get theirs at once and see their signal abort. Other turns go on. The run's signal
 *    cancels every turn. How long a turn stays cancelled is the batch's (`CancelledTurns`).
 * 4. A timed-out or cancelled body keeps its slot until it settles, at most `abortGraceMs`, so a body
 *    that honours its signal never overlaps its successor, and one that ignores it cannot stall the pool.
 * 5. While `maxPending` results wait behind an unfinished earlier call, only that call (or, when
 *    nothing runs, any) may start — the queue's head, a call granted its permit or token, an
 *    `after-response` call: memory stays bounded behind a straggler (`ResultOrder`). A retry started
 *    before: its next attempt, in its slot or back from a wait for a token, is held back by nothing.
 * 6. Completion waits for every received call's result; a source error is forwarded after them.
 * 7. Teardown (unsubscribe or completion) aborts every body still holding a slot and clears every timer
 *    and listener. Reports from bodies after teardown are ignored.
 * 7a. A resumed call answered `outcome_unknown` (it had started before a crash) waits for its turn in
 *    the queue like any call and fails there, as a body failure of its mode would: an exclusive one
 *    cancels the rest of its turn (unless `onError` says otherwise), never the calls before it.
 * 8. In a program's batch (`settings.programBatch`) nothing but the run signal cancels the rest, and
 *    completion also waits for every slot to be released (bodies settled, or abandoned after the grace).
 * 8a. A call of a tool with a `limit` takes a permit before it starts (see `LimitWaits`): a parallel one
 *    whose limit is full leaves the queue (holding no slot, blocking nobody) and starts, ahead of the
 *    queue, once granted and a slot is free; an exclusive one waits at the head. An exclusive head also
 *    waits for every parked call, so barriers keep their meaning.
 * 8b. A failed attempt of a tool with `retry` (a throw, rejection or stream error, or a timeout) is not
 *    the call's outcome while attempts remain and `retryOn` agrees: the call keeps its slot (an exclusive
 *    one stays alone), waits the backoff on the scheduler and runs its body again with a fresh signal and
 *    its own timeout. A timed-out attempt is aborted first; the delay starts once it settled (at most
 *    `abortGraceMs`), so attempts never overlap. Cancelling the call or closing the pool clears a
 *    pending delay, and no attempt starts after it. The report of an earlier attempt is ignored.
 *    A rate-limited tool's next attempt takes a token of its own: while none is free, an exclusive call
 *    waits in its slot (alone: nothing of its pool holds or waits for a token), a parallel one gives its
 *    slot back and waits parked, returning through `granted` — a call in a slot never waits for a token
 *    a slot-less call holds, so slots and tokens cannot deadlock. That wait has the call's time limit
 *    (`timeoutMs`, else `defaultTimeoutMs`) from the delay's end: past it the call is answered `timeout`.
 * 8c. A call of a tool with a `rateLimit` then takes a token the same way (a second `LimitWaits`), once
 *    it holds its permit and a slot is free: so no token goes to a call that cannot start. The token is
 *    spent when the body starts and returned if it never does (a start check denied it, it was
 *    cancelled, it timed out waiting); a call parked for a token keeps its permit, returned if it ends.
 * 8d. A call of a tool with `start: 'after-response'` waits, before its limits, until the source completed:
 *    a parallel one leaves the queue for `responseWaits` (holding no slot, blocking nobody) and goes
 *    first once the source completed; an exclusive one waits at the head, and an exclusive head waits
 *    for every call in `responseWaits`, so order holds. If the source errors, all of them (waiting or
 *    still queued) are answered `cancelled` (`response_failed`) before the error is forwarded.
 * 8e. With execute middleware (the pipeline's `execute`, the tool's `chains.execute`), each attempt runs
 *    through them (`runExecuteChain`) instead of invoking the body directly: inside the attempt's slot
 *    and time limit, which a middleware may shorten (`tightenTimeout`). A failure of the chain's own
 *    (`chainFailed`) answers the call without a retry and cancels nothing.
 * 9. A body that rejects with `BodySuspended` (a program in a durable turn that can only wait for
 *    suspended approvals) ends its call as `suspended`, which cancels nothing; it then holds its place
 *    like a call the guard suspended, and the queued calls that may not overtake it are suspended too.
 *
 * Nothing recurses per call: `pump` is re-entrant-safe (a nested call returns and the running loop picks
 * up the work), and cancelling a backlog of any size is one loop, so synchronous bodies and 20k-call
 * backlogs neither overflow the stack nor stall.
 */
export class CallPool implements ExecuteHost {
  /** Records waiting for a slot, in arrival order. */
  private readonly queue = new Fifo<CallRecord>();
  /** Records whose body holds a slot. */
  private readonly running = new Set<CallRecord>();
  /** An exclusive body holds the pool. */
  private exclusiveRunning = false;
  /** Received records whose result is not yet emitted (in flight), and how the source ended. */
  private readonly drain: Drain;
  /** The results against model order: who may start while `maxPending` results wait (rule 5). */
  private readonly order: ResultOrder;
  /** Set once everything is cancelled (the run's signal). */
  private cancellation: Cancellation | undefined = undefined;
  /** Suspended calls (durable turns) hold their place: the calls that may not overtake them are suspended too. */
  private readonly suspended = new SuspendedPlaces();
  /** Calls waiting for, or holding, a permit of their tool's limit. */
  private readonly limits: LimitWaits;
  /** Calls waiting for, or holding, a token of their tool's rate limit (after their limit's permit). */
  private readonly rates: LimitWaits;
  /** Parallel `after-response` calls that left the queue to wait for the source to complete, in order. */
  private readonly responseWaits = new Fifo<CallRecord>();
  /** Drawn on first use: the idempotency key of a call without a turn (see `idempotencyKeyOf`). */
  private subscription: string | undefined = undefined;
  /** `pump` is on the stack. */
  private pumping = false;
  /** The output completed, errored or was unsubscribed. */
  private closed = false;
  /** Every attempt's time limit, on one timer (see `Deadlines`). */
  private readonly deadlines: Deadlines<CallRecord>;
  private readonly onGraceOver = (record: CallRecord | undefined) => this.abandon(record!);
  private readonly onBackoffOver = (record: CallRecord | undefined) => this.retryNow(record!);
  private readonly onAbort = () => this.cancelRest('aborted', undefined);
  /** The execute middleware of each tool's calls; none for most, whose bodies are invoked directly. */
  private readonly executeChains: ChainsByTool<'execute'>;
  /** The time limits middleware shortened, by attempt: what a `timeout` then reports. */
  private tightened: WeakMap<BodyRun, number> | undefined = undefined;

  constructor(
    private readonly settings: PipelineSettings,
    private readonly destination: Subscriber<CallRecord>,
    private readonly signal: AbortSignal | undefined,
    /** Told when the rest is cancelled, so calls still in the policy stages are cancelled too. */
    private readonly batch: BatchCancel,
  ) {
    const pump = () => this.pump();
    this.limits = new LimitWaits(pump, limitGate, settings.scheduler, 'limit');
    this.rates = new LimitWaits(pump, rateGate, settings.scheduler, 'rate limit');
    this.deadlines = new Deadlines(settings.scheduler, (record) => this.timeout(record));
    this.order = new ResultOrder(settings.maxPending);
    this.drain = new Drain(destination);
    this.executeChains = new ChainsByTool('execute', { middleware: settings.execute, names: settings.executeNames });
    if (signal?.aborted) this.onAbort();
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  next(record: CallRecord): void {
    if (this.closed) return;
    this.drain.add();
    // Cancelled on arrival: everything (the run's signal), or its turn while the batch remembers it.
    const cancellation = record.status === undefined ? (this.batch.cancellationOf(record) ?? this.responseFailed(record)) : undefined;
    if (record.status === 'suspended') {
      this.suspended.hold(record);
      this.emit(record);
    } else if (record.status === undefined && cancellation === undefined && this.suspended.stopped(record)) {
      this.emit(record);
    } else if (record.error?.code === 'outcome_unknown' && cancellation === undefined) {
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

  subscriptionId(): string {
    return (this.subscription ??= randomUUID());
  }

  error(error: unknown): void {
    this.drain.end({ error });
    if (!this.closed) this.cancelAfterResponse();
    this.complete();
  }

  complete(): void {
    if (!this.drain.ended) this.drain.end('complete'); // error() ends here too, its error recorded
    if (this.responseWaits.length > 0 || this.queue.length > 0) this.pump(); // after-response calls may start now
    this.closeIfDone();
  }

  /** An `after-response` call arriving after the source errored (from a stage still working): it never runs. */
  private responseFailed(record: CallRecord): Cancellation | undefined {
    return this.drain.sourceFailed && record.tool!.start === 'after-response' ? RESPONSE_FAILED : undefined;
  }

  /** The source errored: the `after-response` calls that have not started never will. */
  private cancelAfterResponse(): void {
    const cancellation = RESPONSE_FAILED;
    const waiting = [...this.responseWaits.removeWhere(() => true), ...this.queue.removeWhere((record) => record.status === undefined && record.tool!.start === 'after-response')];
    for (const record of waiting) record.cancel(cancellation);
    for (const record of waiting) this.emit(record);
    this.pump(); // exclusive calls waiting behind them may start
  }

  resolveBody(record: CallRecord, run: BodyRun, value: unknown, streamed: boolean): void {
    if (run !== record.run) return; // an earlier attempt, abandoned after its grace
    if (run.done || this.closed) return this.settledLate(record);
    if (this.retryAfterSettled(record, run)) return;
    this.release(record);
    if (record.status === undefined) {
      record.endedAt = performance.now();
      record.succeed(value, streamed);
      this.pump();
      this.emit(record);
    } else {
      this.pump();
    }
  }

  rejectBody(record: CallRecord, run: BodyRun, error: unknown, partial: readonly unknown[] | undefined): void {
    if (run !== record.run) return; // an earlier attempt, abandoned after its grace
    if (run.done || this.closed) return this.settledLate(record);
    if (this.retryAfterSettled(record, run)) return;
    const failure =
      record.status === undefined && !(error instanceof BodySuspended) && !(error instanceof OutcomeUnknown)
        ? ({ code: 'tool_error', message: `Tool "${record.name}" failed: ${describeError(error)}`, cause: error } as const)
        : undefined;
    if (failure !== undefined) {
      const delayMs = this.retryDelayAfter(record, failure);
      if (delayMs !== undefined) return this.backOff(record, delayMs);
    }
    this.release(record);
    if (record.status === undefined) {
      record.endedAt = performance.now();
      if (error instanceof BodySuspended) return this.suspendBody(record, error);
      if (error instanceof OutcomeUnknown) record.fail('error', { code: 'outcome_unknown', message: `Tool "${record.name}": ${describeError(error)}` });
      else record.fail('error', failure!, partial);
      this.failed(record);
    }
    this.pump();
  }

  chainFailed(record: CallRecord, run: BodyRun, failure: ExecuteFailure): void {
    if (run !== record.run) return; // an earlier attempt, abandoned after its grace
    if (run.done || this.closed) return this.settledLate(record);
    if (this.retryAfterSettled(record, run)) return;
    this.release(record);
    if (record.status === undefined) {
      record.endedAt = performance.now();
      refuseExecute(record, failure);
      this.pump(); // the middleware's failure, not the tool's: it cancels nothing (see 8e)
      this.emit(record);
    } else {
      this.pump();
    }
  }

  tightenTimeout(record: CallRecord, run: BodyRun, ms: number): void {
    if (run !== record.run || run.done || record.status !== undefined || this.closed) return;
    run.clearTimer();
    (this.tightened ??= new WeakMap()).set(run, ms);
    run.timer = this.deadlines.add(record, ms);
  }

  /**
   * Whether attempt `record.attempts` may be repeated after `failure` (see 8b): if so, its error is
   * traced, the `retry` event reported, and the delay before the next attempt returned.
   */
  private retryDelayAfter(record: CallRecord, failure: AttemptError): number | undefined {
    const retry = record.tool!.retry;
    if (retry === undefined || record.status !== undefined || this.closed) return undefined;
    const failed = record.attempts;
    if (!mayRetry(retry, failed, failure)) return undefined;
    if (record.status !== undefined || this.closed) return undefined; // retryOn cancelled it, somehow
    const delayMs = retryDelay(retry, failed);
    record.addTrace({ stage: 'execute', event: 'attempt_failed', attempt: failed, error: failure, delayMs });
    record.hooks?.retry(record, failed, failure, delayMs);
    return delayMs;
  }

  /** A timed-out attempt to be retried has settled: the delay starts now. */
  private retryAfterSettled(record: CallRecord, run: BodyRun): boolean {
    if (run.retryAfterMs === undefined || record.status !== undefined) return false;
    this.backOff(record, run.retryAfterMs);
    return true;
  }

  /**
   * Through the delay the call holds its slot with a run of its own that nothing executes: cancelling
   * it frees the slot at once (its `stopBody` says the body is finished) and clears the delay. Holding
   * the slot keeps the pool's promises simple — an exclusive call stays alone between its attempts,
   * a call's place in `concurrency` does not go to calls behind it only to be waited for again, and
   * `maxPending` keeps counting it as running. (A wait for a token after the delay is another matter:
   * see `retryNow`.)
   */
  private backOff(record: CallRecord, delayMs: number): void {
    const failed = record.run!;
    failed.done = true;
    failed.clearTimer();
    const waiting = new BodyRun(failed.exclusive);
    waiting.stopBody = BETWEEN_ATTEMPTS;
    record.run = waiting;
    waiting.timer = this.settings.scheduler.schedule(this.onBackoffOver, delayMs, record);
  }

  /**
   * The delay is over: the next attempt starts, unless the call was decided (cancelled) meanwhile. An
   * attempt of a rate-limited tool is a body start and takes a token too (see 8b): while none is free,
   * an exclusive call waits in its slot, a parallel one out of it, on the call's deadline.
   */
  private retryNow(record: CallRecord): void {
    const run = record.run!;
    run.timer = undefined;
    if (run.done || this.closed || record.status !== undefined) return;
    const token = record.tool!.rateLimit === undefined ? 'held' : this.rates.retake(record, run.exclusive, () => this.attemptAgain(record));
    if (token === 'held') return this.attemptAgain(record);
    const timeoutMs = this.timeoutOf(record);
    if (timeoutMs !== undefined) run.timer = this.deadlines.add(record, timeoutMs);
    if (token === 'parked') {
      this.running.delete(record); // back through `granted`, ahead of the queue, once it has its token
      this.pump();
    }
  }

  /** The next attempt starts, in the call's slot (with its token, for a rate-limited tool). */
  private attemptAgain(record: CallRecord): void {
    const run = record.run!;
    run.clearTimer(); // the wait's deadline
    run.stopBody = undefined;
    if (record.tool!.rateLimit !== undefined) this.rates.spend(record);
    this.attempt(record);
  }

  /** A body settled after its slot was freed or the pool closed: a permit it still holds is free now. */
  private settledLate(record: CallRecord): void {
    if (!this.closed || record.tool!.limit === undefined) return;
    record.run!.clearTimer();
    this.limits.release(record);
  }

  /**
   * A program's body stopped on approvals that were suspended (durable turns): the call is suspended —
   * not failed, so it cancels nothing — and holds its place; the queued calls that may not overtake it
   * are suspended too, before anything else may start.
   */
  private suspendBody(record: CallRecord, suspended: BodySuspended): void {
    record.fail('suspended', suspended.error);
    this.suspended.hold(record);
    const behind = this.queue.removeWhere((queued) => this.suspended.stopped(queued));
    this.pump();
    this.emit(record);
    for (const queued of behind) this.emit(queued);
  }

  /**
   * Cancel every unfinished call of `by`'s turn but `by` (of every turn when the run's signal aborted,
   * `by` undefined): queued ones get a `cancelled` result without starting, running ones get theirs now
   * and see their signal abort (their slot is held until they settle, at most `abortGraceMs`), and
   * later arrivals are cancelled on arrival.
   */
  cancelRest(reason: CancelReason, by: CallRecord | undefined): void {
    if (this.cancellation !== undefined || this.closed) return;
    const cancellation: Cancellation = { reason, by };
    let reached: (record: CallRecord) => boolean;
    if (reason === 'aborted') {
      this.cancellation = cancellation;
      this.batch.cancelAll(cancellation);
      reached = () => true;
    } else {
      if (this.settings.programBatch === true) return; // the program decides
      const turn = by?.turn;
      if (!this.batch.cancelTurn(turn, cancellation)) return; // cancelled already
      reached = (record) => record.turn === turn;
    }
    const cancelled: CallRecord[] = [];
    for (const record of this.running) {
      if (record === by || record.status !== undefined || !reached(record)) continue;
      record.endedAt = performance.now();
      record.cancel(cancellation);
      cancelled.push(record);
    }
    // Abort after deciding their results: an abort listener may settle a body synchronously.
    const abortReason = cancelled.length > 0 ? new DOMException(`cancelled (${reason})`, 'AbortError') : undefined;
    for (const record of cancelled) {
      if (record.run!.abort(abortReason)) this.release(record);
      else this.holdForGrace(record); // other turns go on: the slot is freed at most abortGraceMs from now
    }
    const queued = reason === 'aborted' ? this.queue.removeWhere(() => true) : this.queue.removeWhere(reached);
    for (const record of this.responseWaits.removeWhere(reached)) {
      record.cancel(cancellation);
      cancelled.push(record);
    }
    // Calls parked on a rate limit hold their limit's permit: it is returned too. A parked retry's run ends.
    for (const record of [...this.rates.removeWhere(reached), ...this.limits.removeWhere(reached)]) {
      if (record.started) {
        record.endedAt = performance.now();
        this.release(record);
      } else {
        this.limits.release(record);
      }
      record.cancel(cancellation);
      cancelled.push(record);
    }
    for (const record of queued) {
      // An exclusive head waiting for its limit or token: it held nothing else.
      this.rates.release(record);
      this.limits.release(record);
      if (record.status === undefined) record.cancel(cancellation); // an outcome_unknown keeps its outcome
      cancelled.push(record);
    }
    for (const record of cancelled) this.emit(record);
    this.pump(); // the calls of other turns may start in the slots just freed
  }

  /** Teardown: abort whatever still holds a slot, drop timers, listeners and the queue. */
  close(): void {
    this.closed = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    const reason = this.running.size > 0 ? new DOMException('the subscription ended', 'AbortError') : undefined;
    const lingering = new Set<CallRecord>();
    for (const record of this.running) {
      const run = record.run!;
      run.clearTimer();
      // A no-op for bodies already aborted (and stopped) by a timeout or cancel.
      if (!run.abort(reason) && record.tool!.limit !== undefined && !run.done) lingering.add(record);
    }
    this.running.clear();
    this.deadlines.close();
    this.queue.clear();
    this.responseWaits.clear();
    this.limits.clear(lingering);
    this.rates.clear(NO_RECORDS); // a lingering body spent its token when it started
    // Their limit's permits are returned when they settle (see resolveBody), or when the grace is over.
    const grace = this.settings.abortGraceMs;
    for (const record of lingering) {
      if (grace !== Infinity) record.run!.timer = this.settings.scheduler.schedule(() => this.limits.release(record), grace);
    }
  }

  private pump(): void {
    if (this.pumping) return; // the loop below is on the stack and will see the new state
    this.pumping = true;
    try {
      const { queue, running, settings, limits, rates, responseWaits } = this;
      while (!this.closed && this.cancellation === undefined) {
        // Parked calls granted their permit or token, or whose response ended, came before the queue: they go first.
        if (rates.granted.length > 0 || limits.granted.length > 0 || (this.drain.ended && responseWaits.length > 0)) {
          if (this.exclusiveRunning || running.size >= settings.concurrency) break;
          const record = rates.takeGranted(this.startable) ?? limits.takeGranted(this.startable) ?? this.responded();
          if (record !== undefined) {
            const acquired = this.admit(record, false);
            if (acquired === 'held') this.start(record, false);
            else if (typeof acquired !== 'string') this.limitKeyFailed(record, acquired.keyError);
            continue;
          }
          // `maxPending` holds them back (rule 5): only the straggler may start, maybe the queue's head.
        }
        const head = queue.peek();
        if (head === undefined) break;
        const exclusive = head.tool!.mode === 'exclusive';
        const blocked = exclusive
          ? running.size > 0 || limits.blocksExclusive || rates.blocksExclusive || responseWaits.length > 0
          : this.exclusiveRunning || running.size >= settings.concurrency;
        if (blocked || !this.startable(head)) break;
        if (head.status === undefined && head.tool!.start === 'after-response' && !this.drain.ended) {
          if (exclusive) break; // it waits at the head: nothing passes it
          responseWaits.push(queue.shift()!);
          continue;
        }
        if (head.status === undefined) {
          const acquired = this.admit(head, exclusive);
          if (acquired === 'waiting') break; // an exclusive head: nothing passes it
          if (acquired !== 'held') {
            queue.shift();
            if (acquired !== 'parked') this.limitKeyFailed(head, acquired.keyError);
            continue;
          }
        }
        queue.shift();
        if (head.status === undefined) this.start(head, exclusive);
        else this.failed(head); // outcome_unknown, at its turn: as a failure of its mode (see next)
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Whether a call may start by rule 5 (`maxPending`), whichever way it came; a retry always may. */
  private readonly startable = (record: CallRecord): boolean => record.started || this.order.mayStart(record.index, this.running.size === 0);

  /** The oldest parallel `after-response` call, once the response ended, if it may start now. */
  private responded(): CallRecord | undefined {
    const next = this.drain.ended ? this.responseWaits.peek() : undefined;
    return next !== undefined && this.startable(next) ? this.responseWaits.shift() : undefined;
  }

  /**
   * Takes what a call needs before it may start, as far as it can: first its limit's permit, then —
   * holding that — its rate limit's token (spent when the body starts, returned if it never does), so
   * no token goes to a call still waiting for a permit. `held` when it has both (or needs neither); a
   * key that failed returns the permit already taken.
   */
  private admit(record: CallRecord, exclusive: boolean): Acquired {
    const { limit, rateLimit } = record.tool!;
    const permit = limit === undefined ? 'held' : this.limits.acquire(record, exclusive);
    if (permit !== 'held' || rateLimit === undefined) return permit;
    const token = this.rates.acquire(record, exclusive);
    if (typeof token !== 'string') this.limits.release(record);
    return token;
  }

  /** A call whose limit key could not be computed: it fails without running, as a body failure would. */
  private limitKeyFailed(record: CallRecord, why: string): void {
    record.fail('error', { code: 'tool_error', message: `Tool "${record.name}" could not start: ${why}.`, cause: undefined });
    this.failed(record);
  }

  private start(record: CallRecord, exclusive: boolean): void {
    this.running.add(record);
    if (record.started) return this.attemptAgain(record); // a retry back with its token (see retryNow)
    record.run = new BodyRun(exclusive);
    if (exclusive) this.exclusiveRunning = true;
    const checks = record.startChecks;
    if (checks === undefined) this.invoke(record);
    else this.check(record, checks);
  }

  /**
   * Repeats the policies' start checks now that the call holds its slot (approvals and barriers may
   * have taken minutes): the body starts only if none refuses, within `policyTimeoutMs`. Cancelling the
   * call meanwhile aborts the checks' signal; its slot is freed when they settle.
   */
  private check(record: CallRecord, checks: readonly StartCheckEntry[]): void {
    const run = record.run!;
    const controller = new AbortController();
    run.stopBody = () => {
      controller.abort(new DOMException('the call was cancelled before its body started', 'AbortError'));
      return false;
    };
    const limit = this.settings.policyTimeoutMs;
    if (limit !== undefined) {
      run.timer = this.settings.scheduler.schedule(() => {
        run.timer = undefined;
        controller.abort(new DOMException(`start checks timed out after ${limit} ms`, 'TimeoutError'));
        const pending = checks.map(({ policy }) => policy).join(', ');
        this.checked(record, run, { kind: 'failed', policy: pending, message: `did not answer within ${limit} ms`, cause: undefined });
      }, limit);
    }
    void runStartChecks(checks, record.args, controller.signal).then((refusal) => this.checked(record, run, refusal));
  }

  /** The start checks settled (or timed out): start the body, or answer the call without it. */
  private checked(record: CallRecord, run: BodyRun, refusal: StartRefusal | undefined): void {
    if (run.done || this.closed || run.stopBody === undefined) return; // released, torn down, or answered already
    run.stopBody = undefined;
    run.clearTimer();
    if (record.status !== undefined) {
      // Cancelled or aborted while checking: the body never started, so the slot is free now.
      this.release(record);
      this.pump();
      return;
    }
    if (refusal === undefined) return this.invoke(record);
    this.release(record);
    refuseStart(record, refusal);
    // A denial is a decision, not a failure: it cancels nothing.
    this.pump();
    this.emit(record);
  }

  /** Starts the body: its time limit runs from now. */
  private invoke(record: CallRecord): void {
    record.started = true;
    record.startedAt = performance.now();
    record.hooks?.started(record);
    if (record.tool!.rateLimit !== undefined) this.rates.spend(record); // the first attempt's token (a retry takes its own: retryNow)
    this.attempt(record);
  }

  /** Runs one attempt of the body (the first, or a retry): its time limit runs from now. */
  private attempt(record: CallRecord): void {
    const run = record.run!;
    record.attempts++;
    const timeoutMs = this.timeoutOf(record);
    if (timeoutMs !== undefined) run.timer = this.deadlines.add(record, timeoutMs);
    const { retention } = this.settings;
    const maxItems = retention.size === 0 ? Infinity : (retention.get(record.tool!.name)?.maxItems ?? Infinity);
    const chain = this.executeChains.of(record.tool);
    if (chain === undefined) invokeBody(this, record, new ExecutionContext(this, record), maxItems);
    else runExecuteChain(this, record, chain, maxItems, timeoutMs, this.settings.scheduler);
  }

  private timeout(record: CallRecord): void {
    const run = record.run!;
    run.timer = undefined;
    if (record.status !== undefined || this.closed) return;
    const timeoutMs = this.tightened?.get(run) ?? this.timeoutOf(record)!;
    if (run.stopBody === BETWEEN_ATTEMPTS) return this.waitedTooLong(record, timeoutMs);
    const failure = { code: 'timeout', message: `Tool "${record.name}" timed out after ${timeoutMs} ms.`, timeoutMs } as const;
    const delayMs = this.retryDelayAfter(record, failure);
    const reason = new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError');
    if (delayMs !== undefined) {
      // Retried: the next attempt waits for this one to settle (at most the grace), then the delay.
      if (run.abort(reason) || this.settings.abortGraceMs === 0) return this.backOff(record, delayMs);
      run.retryAfterMs = delayMs;
      return this.holdForGrace(record);
    }
    record.endedAt = performance.now();
    record.fail('error', failure);
    const finished = run.abort(reason);
    if (finished) this.release(record);
    else this.holdForGrace(record);
    this.failed(record);
    this.pump();
  }

  /** A retried call did not get its token (or, parked, its slot back) within its time limit: it ends so. */
  private waitedTooLong(record: CallRecord, timeoutMs: number): void {
    const slot = this.running.has(record) ? '' : ', or the pool a free slot';
    const message = `Tool "${record.name}" timed out after ${timeoutMs} ms waiting to start attempt ${record.attempts + 1}: its rate limit had no token for it${slot}.`;
    record.endedAt = performance.now();
    record.fail('error', { code: 'timeout', message, timeoutMs });
    this.release(record);
    this.failed(record);
    this.pump();
  }

  /** The body's time limit: the tool's own, else the pipeline's; `undefined` for none. */
  private timeoutOf(record: CallRecord): number | undefined {
    const timeoutMs = record.tool!.timeoutMs ?? this.settings.defaultTimeoutMs;
    return timeoutMs === Infinity ? undefined : timeoutMs;
  }

  /** Keep an aborted body's slot until it settles, at most `abortGraceMs`. */
  private holdForGrace(record: CallRecord): void {
    record.run!.clearTimer(); // a cancelled body's own timeout, still armed, would outlive it
    const grace = this.settings.abortGraceMs;
    if (grace === 0) this.release(record);
    else if (grace !== Infinity) record.run!.timer = this.settings.scheduler.schedule(this.onGraceOver, grace, record);
  }

  private abandon(record: CallRecord): void {
    const run = record.run!;
    run.timer = undefined;
    if (run.done || this.closed) return;
    if (this.retryAfterSettled(record, run)) return; // a timed-out attempt that ignored its signal
    this.release(record);
    this.pump();
  }

  /**
   * A failed call: cancel the rest of its turn if its policy says so — the tool's `onError`, else the
   * pipeline's, else its mode's (an exclusive call's failure cancels its turn; a parallel one's nothing)
   * — then emit it.
   */
  private failed(record: CallRecord): void {
    const tool = record.tool!;
    const onError: OnError = tool.onError ?? this.settings.onError ?? (tool.mode === 'exclusive' ? 'cancel-rest' : 'continue');
    if (onError === 'cancel-rest') this.cancelRest('sibling_failed', record);
    this.emit(record);
  }

  private release(record: CallRecord): void {
    const run = record.run!;
    run.done = true;
    run.clearTimer();
    this.running.delete(record);
    if (run.exclusive) this.exclusiveRunning = false;
    // Last: the permit (or a token the body never spent) may start a waiter at once.
    if (record.tool!.limit !== undefined) this.limits.release(record);
    if (record.tool!.rateLimit !== undefined) this.rates.release(record); // a token held, or a retry's wait for one
    if (this.settings.programBatch === true) this.closeIfDone();
  }

  private emit(record: CallRecord): void {
    if (this.closed) return;
    this.drain.settle();
    this.batch.answered(record);
    this.destination.next(record);
    // After delivering: resuming may start and finish other calls, and even complete the output.
    if (this.order.answered(record.index)) this.pump();
    this.closeIfDone();
  }

  private closeIfDone(): void {
    if (this.closed || !this.drain.idle) return;
    if (this.settings.programBatch === true && this.running.size > 0) return; // bodies still winding down
    this.closed = true; // before the output ends: the pool's own flag (teardown sets it too), not the drain's
    this.drain.close();
  }
}

const NO_RECORDS: ReadonlySet<CallRecord> = new Set();
/** The `stopBody` of a run between attempts: no body runs, so stopping it frees its slot at once. */
const BETWEEN_ATTEMPTS = (): boolean => true;
const RESPONSE_FAILED: Cancellation = Object.freeze({ reason: 'response_failed', by: undefined });

const limitGate = (record: CallRecord): GateOf => {
  const { limiter, key } = record.tool!.limit!;
  return { gate: limiterPermits(limiter), key };
};

const rateGate = (record: CallRecord): GateOf => {
  const { limiter, key } = record.tool!.rateLimit!;
  return { gate: rateLimiterTokens(limiter), key };
};
