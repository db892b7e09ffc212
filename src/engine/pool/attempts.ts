import { randomId } from '../../util/digest.js';
import type { AttemptError } from '../../types/retry.js';
import { describeError } from '../../util/describe.js';
import { Later } from '../../util/later.js';
import { outcomeOf } from '../../util/outcome.js';
import { mayRetry, retryDelay } from '../../tool/schedule/retry.js';
import type { CallRecord } from '../records/callRecord.js';
import { refuseStart } from '../chains/refuseStart.js';
import { ChainsByTool } from '../chains/chainsByTool.js';
import { runExecuteChain, type ExecuteFailure, type ExecuteHost } from '../chains/executeChain.js';
import { refuseExecute } from '../chains/refuseExecute.js';
import { runStartChecks, type StartCheckEntry, type StartRefusal } from '../chains/startChecks.js';
import { BodyRun } from './bodyRun.js';
import { Deadlines } from './deadlines.js';
import { ExecutionContext } from './executionContext.js';
import { invokeBody } from './invokeBody.js';
import type { AttemptsHost } from './attemptsHost.js';
import type { AttemptSettings } from '../settings.js';

/**
 * A call's life in its slot, one instance per pool: its start checks, each attempt of its body with its
 * time limit, the grace after an abort (rule 4), the delay before a retry (8b), and what the body
 * reported, decoded into an `AttemptOutcome` (9). With execute middleware (the run's layers' own,
 * `CallHooks.execute`, outside the pipeline's `execute` and the tool's `chains.execute`) each attempt
 * runs through them (`runExecuteChain`) instead of invoking the body directly, inside the attempt's
 * slot and time limit, which a middleware may shorten (`tightenTimeout`); a failure of the chain's own
 * (`chainFailed`) answers the call without a retry and cancels nothing. An attempt's state is its `BodyRun`
 * (`record.run`): a report of a run that is no longer the call's (an earlier attempt, abandoned after
 * its grace) is ignored.
 */
export class Attempts implements ExecuteHost {
  /** Every attempt's time limit, on one timer (see `Deadlines`). */
  private readonly deadlines: Deadlines<CallRecord>;
  /** Drawn on first use: the idempotency key of a call without a turn (see `idempotencyKeyOf`). */
  private subscription: string | undefined = undefined;
  /** The execute middleware of each tool's calls; none for most, whose bodies are invoked directly. */
  private readonly executeChains: ChainsByTool<'execute'>;
  /** The time limits middleware shortened, by attempt: what a `timeout` then reports. */
  private tightened: WeakMap<BodyRun, number> | undefined = undefined;
  // Bound once per pool: scheduling a timer allocates no closure per call.
  private readonly onGraceOver = (record: CallRecord | undefined) => this.abandon(record!);
  private readonly onBackoffOver = (record: CallRecord | undefined) => this.retryNow(record!);
  private readonly onChecksTimedOut = (record: CallRecord | undefined) => this.checksTimedOut(record!);

  constructor(
    private readonly host: AttemptsHost,
    private readonly settings: AttemptSettings,
  ) {
    this.deadlines = new Deadlines(settings.scheduler, (record) => this.timeout(record));
    this.executeChains = new ChainsByTool('execute', { middleware: settings.execute, names: settings.executeNames });
  }

  /** The call took its slot: its start checks run, then its body. */
  start(record: CallRecord, exclusive: boolean): void {
    record.run = new BodyRun(exclusive);
    const checks = record.startChecks;
    if (checks === undefined) this.invoke(record);
    else this.check(record, checks);
  }

  /** The next attempt starts, in the call's slot (with its token, for a rate-limited tool). */
  again(record: CallRecord): void {
    const run = record.run!;
    run.clearTimer(); // the wait's deadline
    run.stopBody = undefined;
    if (record.tool!.rateLimit !== undefined) this.host.spend(record);
    this.attempt(record);
  }

  /** The call was answered while in its slot (cancelled): its body is aborted, its slot held by rule 4. */
  stop(record: CallRecord, reason: unknown): void {
    if (record.run!.stop(reason)) this.host.release(record);
    else this.holdForGrace(record);
  }

  subscriptionId(): string {
    return (this.subscription ??= randomId());
  }

  cancelRest(reason: 'cancel_requested', by: CallRecord): void {
    this.host.cancelRest(reason, by);
  }

  /** Teardown: no time limit fires any more. */
  close(): void {
    this.deadlines.close();
  }

  /**
   * Repeats the policies' start checks now that the call holds its slot (approvals and barriers may
   * have taken minutes): the body starts only if none refuses, within `policyTimeoutMs`. The checks run
   * under the run the slot was taken with (its signal is theirs: cancelling the call aborts it, and the
   * slot is freed when they settle); the body gets a run of its own.
   */
  private check(record: CallRecord, checks: readonly StartCheckEntry[]): void {
    const run = record.run!;
    const refusal = runStartChecks(checks, record.args, run);
    if (!(refusal instanceof Later)) return this.checked(record, run, refusal); // answered at once: no timer
    const limit = this.settings.policyTimeoutMs;
    if (limit !== undefined) run.timer = this.settings.scheduler.schedule(this.onChecksTimedOut, limit, record);
    void refusal.then((outcome) => this.checked(record, run, outcome));
  }

  private checksTimedOut(record: CallRecord): void {
    const run = record.run!;
    run.timer = undefined;
    const limit = this.settings.policyTimeoutMs!;
    run.stop(new DOMException(`start checks timed out after ${limit} ms`, 'TimeoutError'));
    const pending = record.startChecks!.map(({ policy }) => policy).join(', ');
    this.checked(record, run, { kind: 'failed', policy: pending, message: `did not answer within ${limit} ms`, cause: undefined });
  }

  /** The start checks settled (or timed out): start the body, or answer the call without it. */
  private checked(record: CallRecord, run: BodyRun, refusal: StartRefusal | undefined): void {
    if (run !== record.run || run.done || this.host.closed) return; // answered already, released, or torn down
    run.clearTimer();
    if (record.status !== undefined) {
      // Cancelled or aborted while checking: the body never started, so the slot is free now.
      this.host.release(record);
      return this.host.ended(record, 'freed');
    }
    if (refusal === undefined) {
      record.run = new BodyRun(run.exclusive);
      return this.invoke(record);
    }
    this.host.release(record);
    refuseStart(record, refusal);
    this.host.ended(record, 'answered'); // a denial is a decision, not a failure: it cancels nothing
  }

  /** Starts the body: its time limit runs from now. */
  private invoke(record: CallRecord): void {
    record.started = true;
    record.startedAt = record.clock();
    record.hooks?.started(record);
    if (record.tool!.rateLimit !== undefined) this.host.spend(record); // the first attempt's token (a retry takes its own)
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
    const chain = this.executeChains.of(record.tool, record.hooks?.execute); // the run's layers' outermost
    if (chain === undefined) invokeBody(this, record, new ExecutionContext(this, record), maxItems);
    else runExecuteChain(this, record, chain, maxItems, timeoutMs, this.settings.scheduler);
  }

  /**
   * Whether a report of attempt `run` is to be acted on: it is the call's attempt (not an earlier one,
   * abandoned after its grace), in time (else the pool hears it is `late`), and not a timed-out attempt
   * to be retried once it settled (whose delay starts now instead).
   */
  private current(record: CallRecord, run: BodyRun): boolean {
    if (run !== record.run) return false;
    if (run.done || this.host.closed) {
      this.host.ended(record, 'late');
      return false;
    }
    return !this.retryAfterSettled(record, run);
  }

  /** The attempt is over and its slot freed: whether the call still waits for its result (it ends now), or was answered meanwhile (`freed`). */
  private over(record: CallRecord): boolean {
    this.host.release(record);
    if (record.status !== undefined) {
      this.host.ended(record, 'freed');
      return false;
    }
    record.endedAt = record.clock();
    return true;
  }

  resolveBody(record: CallRecord, run: BodyRun, value: unknown, streamed: boolean): void {
    if (!this.current(record, run)) return;
    if (!this.over(record)) return;
    record.succeed(value, streamed);
    this.host.ended(record, 'answered');
  }

  /**
   * 9. A body (or an execute middleware) that ends its attempt with a typed outcome — returned or
   *    thrown, both reported here by `invokeBody` — ends its call so, and is never retried:
   *    `outcome.suspended` as `suspended` (not a failure: it cancels nothing, and holds its place),
   *    `outcome.unknown` (its effect may or may not have happened) as an `outcome_unknown` error, a
   *    failure of its mode. Anything else is the body's failure (`tool_error`), retried if it may be.
   */
  rejectBody(record: CallRecord, run: BodyRun, error: unknown, partial: readonly unknown[] | undefined): void {
    if (!this.current(record, run)) return;
    const known = outcomeOf(error);
    const ended = known?.kind === 'streamed' ? undefined : known; // (never streamed: invokeBody collected that as an output)
    const failure =
      record.status === undefined && ended === undefined
        ? ({ code: 'tool_error', message: `Tool "${record.name}" failed: ${describeError(error)}`, cause: error } as const)
        : undefined;
    if (failure !== undefined) {
      const delayMs = this.retryDelayAfter(record, failure);
      if (delayMs !== undefined) return this.backOff(record, delayMs);
    }
    if (!this.over(record)) return;
    if (ended?.kind === 'suspended') {
      record.fail('suspended', ended.error);
      return this.host.ended(record, 'suspended');
    }
    if (ended?.kind === 'outcome-unknown') record.failUnknown(ended);
    else record.fail('error', failure!, partial);
    this.host.ended(record, 'failed');
  }

  /** The execute chain failed on its own (see `ExecuteMiddleware`): the call is answered, not retried, cancelling nothing. */
  chainFailed(record: CallRecord, run: BodyRun, failure: ExecuteFailure): void {
    if (!this.current(record, run)) return;
    if (!this.over(record)) return;
    refuseExecute(record, failure);
    this.host.ended(record, 'answered');
  }

  tightenTimeout(record: CallRecord, run: BodyRun, ms: number): void {
    if (run !== record.run || run.done || record.status !== undefined || this.host.closed) return;
    run.clearTimer();
    (this.tightened ??= new WeakMap()).set(run, ms);
    run.timer = this.deadlines.add(record, ms);
  }

  /** The attempt's time limit passed (or, between attempts, the wait for a token outlasted it). */
  private timeout(record: CallRecord): void {
    const run = record.run!;
    run.timer = undefined;
    if (record.status !== undefined || this.host.closed) return;
    const timeoutMs = this.tightened?.get(run) ?? this.timeoutOf(record)!;
    if (run.stopBody === BETWEEN_ATTEMPTS) return this.waitedTooLong(record, timeoutMs);
    const failure = { code: 'timeout', message: `Tool "${record.name}" timed out after ${timeoutMs} ms.`, timeoutMs } as const;
    const delayMs = this.retryDelayAfter(record, failure);
    const reason = new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError');
    if (delayMs !== undefined) {
      // Retried: the next attempt waits for this one to settle (at most the grace), then the delay.
      if (run.stop(reason) || this.settings.abortGraceMs === 0) return this.backOff(record, delayMs);
      run.retryAfterMs = delayMs;
      return this.holdForGrace(record);
    }
    record.endedAt = record.clock();
    record.fail('error', failure);
    this.stop(record, reason);
    this.host.ended(record, 'failed');
  }

  /** A retried call did not get its token (or, parked, its slot back) within its time limit: it ends so. */
  private waitedTooLong(record: CallRecord, timeoutMs: number): void {
    const slot = this.host.holdsSlot(record) ? '' : ', or the pool a free slot';
    const message = `Tool "${record.name}" timed out after ${timeoutMs} ms waiting to start attempt ${record.attempts + 1}: its rate limit had no token for it${slot}.`;
    record.endedAt = record.clock();
    record.fail('error', { code: 'timeout', message, timeoutMs });
    this.host.release(record);
    this.host.ended(record, 'failed');
  }

  /** The body's time limit: the tool's own, else the pipeline's; `undefined` for none. */
  private timeoutOf(record: CallRecord): number | undefined {
    const timeoutMs = record.tool!.timeoutMs ?? this.settings.defaultTimeoutMs;
    return timeoutMs === Infinity ? undefined : timeoutMs;
  }

  /**
   * 4. A timed-out or cancelled body keeps its slot until it settles, at most `abortGraceMs`, so a body
   *    that honours its signal never overlaps its successor, and one that ignores it cannot stall the pool.
   */
  private holdForGrace(record: CallRecord): void {
    record.run!.clearTimer(); // a cancelled body's own timeout, still armed, would outlive it
    const grace = this.settings.abortGraceMs;
    if (grace === 0) this.host.release(record);
    else if (grace !== Infinity) record.run!.timer = this.settings.scheduler.schedule(this.onGraceOver, grace, record);
  }

  /** The grace is over and the aborted body has not settled: its slot is freed without it. */
  private abandon(record: CallRecord): void {
    const run = record.run!;
    run.timer = undefined;
    if (run.done || this.host.closed) return;
    if (this.retryAfterSettled(record, run)) return; // a timed-out attempt that ignored its signal
    this.host.release(record);
    this.host.ended(record, 'freed');
  }

  /**
   * 8b. A failed attempt of a tool with `retry` (a throw, rejection or stream error, or a timeout) is not
   *    the call's outcome while attempts remain and `retryOn` agrees: the call keeps its slot (`backOff`),
   *    waits the backoff on the scheduler and runs its body again with a fresh signal and its own time
   *    limit. A timed-out attempt is aborted first; the delay starts once it settled (at most
   *    `abortGraceMs`), so attempts never overlap. Stopping the call or closing the pool clears a pending
   *    delay, and no attempt starts after it (`retryNow`).
   * If so, the failure is traced, the `retry` event reported, and the delay before the next attempt returned.
   */
  private retryDelayAfter(record: CallRecord, failure: AttemptError): number | undefined {
    const retry = record.tool!.retry;
    if (retry === undefined || record.status !== undefined || this.host.closed) return undefined;
    const failed = record.attempts;
    if (!mayRetry(retry, failed, failure)) return undefined;
    if (record.status !== undefined || this.host.closed) return undefined; // retryOn cancelled it, somehow
    const delayMs = retryDelay(retry, failed);
    record.addTrace({ stage: 'execute', event: 'attempt_failed', attempt: failed, error: failure, delayMs });
    record.hooks?.retry(record, failed, failure, delayMs);
    return delayMs;
  }

  /** A timed-out attempt to be retried has settled (or its grace is over): the delay starts now. */
  private retryAfterSettled(record: CallRecord, run: BodyRun): boolean {
    if (run.retryAfterMs === undefined || record.status !== undefined) return false;
    this.backOff(record, run.retryAfterMs);
    return true;
  }

  /**
   * Through the delay the call holds its slot with a run of its own that nothing executes: stopping it
   * frees the slot at once (its `stopBody` says the body is finished) and clears the delay. Holding the
   * slot keeps the pool's promises simple — an exclusive call stays alone between its attempts, a call's
   * place in `concurrency` does not go to calls behind it only to be waited for again, and `maxPending`
   * keeps counting it as running. (A wait for a token after the delay is another matter: see `retryNow`.)
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
   * The delay is over: the next attempt starts, unless the call was answered (cancelled) meanwhile. An
   * attempt of a rate-limited tool is a body start and takes a token too: while none is free, it waits
   * (in its slot or out of it, see the host's `retake`) on the call's time limit.
   */
  private retryNow(record: CallRecord): void {
    const run = record.run!;
    run.timer = undefined;
    if (run.done || this.host.closed || record.status !== undefined) return;
    if (record.tool!.rateLimit === undefined) return this.again(record);
    const timeoutMs = this.timeoutOf(record);
    if (timeoutMs !== undefined) run.timer = this.deadlines.add(record, timeoutMs); // withdrawn by `again`
    if (this.host.retake(record, () => this.again(record)) === 'held') this.again(record);
  }
}

/** The `stopBody` of a run between attempts: no body runs, so stopping it frees its slot at once. */
const BETWEEN_ATTEMPTS = (): boolean => true;
