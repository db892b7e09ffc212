import type { SchedulerLike } from 'rxjs';
import { Abort } from '../../stream/abortScope.js';
import { describeError, describeValue } from '../../util/describe.js';
import { Later, thenOrNow, type MaybeLater } from '../../util/later.js';
import { outcomeOf } from '../../util/outcome.js';
import { isPositiveDuration, MAX_TIMER_MS } from '../../util/validate.js';
import { BodyRun } from '../pool/bodyRun.js';
import { ExecutionContext, type CancelRestTarget } from '../pool/executionContext.js';
import { idempotencyKeyOf } from '../pool/idempotencyKey.js';
import { deliverOutput, invokeBody, type BodySink } from '../pool/invokeBody.js';
import type { CallRecord } from '../records/callRecord.js';
import type { Chain } from './chainsByTool.js';
import { ExecuteAnswer, OutputFeed, Settled, type RetryWatcher } from './executeAnswer.js';
import { Collector } from './outputCollector.js';
import type { ExecuteContext, ExecuteMiddleware, ExecuteNext, ExecuteTool, Tightening } from '../../types/execute.js';
import type { ToolCall } from '../../types/toolCall.js';

/** Why an execute chain failed on its own (not the body's error): see `refuseExecute`. */
export interface ExecuteFailure {
  readonly policy: string;
  readonly message: string;
  readonly cause: unknown;
  /** A body ran in the failed attempt: its output is withheld (else nothing ran: the call is denied). */
  readonly bodyRan: boolean;
}

/** What the chain needs of the pool besides a body's sink: its deadlines, and where a failure of its own goes. */
export interface ExecuteHost extends BodySink, CancelRestTarget {
  /** The attempt's time limit now ends `ms` from now (the chain has checked that this is sooner). */
  tightenTimeout(record: CallRecord, run: BodyRun, ms: number): void;
  /** The chain failed on its own: answer the call without a retry, cancelling nothing. */
  chainFailed(record: CallRecord, run: BodyRun, failure: ExecuteFailure): void;
}

/**
 * Runs one attempt of `record`'s body through `chain` (the pipeline's and the tool's execute
 * middleware, outermost first) and reports how it ended to `host`, exactly once, for the attempt's
 * run (`record.run`): the output as a body's (`resolveBody`), the body's own error re-thrown unchanged
 * as a body's failure (`rejectBody`: retries and `onError` apply), any other failure as the chain's
 * (`chainFailed`). See `ExecuteMiddleware` for the rules; here, how they hold:
 *
 * 1. The body runs only from the innermost `next()`, at most once per attempt, and never once the
 *    attempt was stopped, the chain failed, or it reported: each middleware's `next()` works once, and
 *    not after the middleware's own output settled.
 * 2. A failure of the chain is the first middleware error that is not the body's (by identity); the
 *    part a middleware started with `next()` always finishes before its own output counts, so the
 *    report comes when nothing the chain started still runs.
 * 3. The attempt's run stays the pool's: aborting it (timeout, cancel-rest, teardown) aborts every
 *    scope of the chain and the body, and its slot is held until the chain reported (`stopBody`
 *    never says "finished"), at most `abortGraceMs`. A stream a scope's abort unsubscribed settles
 *    as failed with the reason, so a middleware awaiting it is not left hanging.
 * 4. Synchronous while the middleware answer at once: a cache hit is reported in the same tick, and
 *    so is a synchronous body under middleware that return (or pipe) their `next()`. No promise is
 *    made unless a middleware makes one (or awaits `next()`); a pending output is a `Later`, which
 *    continues the chain at the moment it settles (virtual time included).
 * 5. `next()` gives an {@link ExecuteAnswer}: the level below's output, whose Observable form emits its
 *    items live (the level's `OutputFeed`). A middleware that returns it unchanged passes that output
 *    through as it is (a value stays a value); a retry of it after its failure is refused and traced.
 */
export function runExecuteChain(
  host: ExecuteHost,
  record: CallRecord,
  chain: Chain<ExecuteMiddleware>,
  maxItems: number,
  /** The attempt's time limit (armed by the pool), or undefined for none. */
  timeoutMs: number | undefined,
  scheduler: SchedulerLike,
): void {
  new AttemptChain(host, record, chain, maxItems, scheduler).start(timeoutMs);
}

/** One attempt's run through the chain. */
class AttemptChain implements RetryWatcher {
  readonly run: BodyRun;
  readonly attempt: number;
  /** What the middleware of the attempt see as `ctx.signal` (unless one tightened it): the attempt's run, aborted. */
  private readonly scope = new Abort();
  /** The body's output, once it ran in this attempt: how it settled tells the body's error (by identity) from the chain's. */
  private bodyOutput: Collector | undefined = undefined;
  private failure: { readonly policy: string; readonly message: string; readonly cause: unknown } | undefined = undefined;
  private ended = false;
  /** Listeners on signals given to `next()`, removed once the attempt reported (the signal may live long). */
  private unlisten: (() => void)[] | undefined = undefined;
  private frozenCall: ToolCall | undefined = undefined;

  constructor(
    readonly host: ExecuteHost,
    readonly record: CallRecord,
    private readonly chain: Chain<ExecuteMiddleware>,
    private readonly maxItems: number,
    private readonly scheduler: SchedulerLike,
  ) {
    this.run = record.run!;
    this.attempt = record.attempts;
  }

  get call(): ToolCall {
    return (this.frozenCall ??= Object.freeze({ id: this.record.id, name: this.record.name, args: this.record.rawArgs }));
  }

  start(timeoutMs: number | undefined): void {
    const { run, scope } = this;
    run.stopBody = () => {
      scope.abort(run.signal.reason); // read after the run aborted: the signal is made aborted, with its reason
      return false;
    };
    const ctx = new MiddlewareContext(this, scope, timeoutMs === undefined ? undefined : this.scheduler.now() + timeoutMs);
    thenOrNow(this.dispatch(0, ctx, undefined), (settled) => this.report(settled));
  }

  /** Runs level `i` (middleware `i`, or the body past the last), whose streamed items go to `feed` (none for the outermost). */
  private dispatch(i: number, ctx: MiddlewareContext, feed: OutputFeed | undefined): MaybeLater<Settled> {
    const { middleware, names } = this.chain;
    if (i === middleware.length) return this.body(ctx, feed);
    const name = names[i]!;
    let state: 'open' | 'called' | 'settled' = 'open';
    let downstream: MaybeLater<Settled> | undefined;
    const next: ExecuteNext = (tighten) => {
      if (state !== 'open') {
        const misuse = state === 'called' ? 'called next() twice' : 'called next() after its own output settled';
        const error = new Error(`execute middleware "${name}" ${misuse} (the body runs at most once per attempt)`);
        this.fail(name, misuse, error);
        return new ExecuteAnswer(new Settled(false, error), undefined, this, name);
      }
      state = 'called';
      let inner: MiddlewareContext;
      try {
        inner = this.tighten(ctx, tighten);
      } catch (error) {
        // A bad tightening: its failure if it lets the rejection through.
        return new ExecuteAnswer(new Settled(false, error), undefined, this, name);
      }
      const below = new OutputFeed();
      downstream = this.dispatch(i + 1, inner, below);
      return new ExecuteAnswer(downstream, below, this, name);
    };
    let output: MaybeLater<Settled>;
    try {
      output = this.collect(middleware[i]!(ctx, next), ctx, feed);
    } catch (error) {
      output = this.thrown(error, ctx, feed);
    }
    return thenOrNow(output, (own) => {
      if (state === 'open') state = 'settled';
      // What it started must have finished too (its output passed through: it has).
      return output === downstream || downstream === undefined ? this.decide(name, own) : thenOrNow(downstream, () => this.decide(name, own));
    });
  }

  /**
   * A middleware's own output settled (and what it started): it stands, or it is the chain's failure.
   * A typed outcome it ended with (`outcome.unknown`, `outcome.suspended`), thrown or returned, stands.
   */
  private decide(name: string, own: Settled): Settled {
    const body = this.bodyOutput?.settled;
    const bodysError = body !== undefined && !body.ok && own.value === body.value;
    if (this.failure === undefined && !own.ok && !bodysError && outcomeOf(own.value) === undefined) {
      this.fail(name, `threw: ${describeError(own.value)}`, own.value);
    }
    // Fail closed: once the chain failed, what a middleware further out answers is not used.
    return this.failure === undefined ? own : new Settled(false, this.failure.cause);
  }

  private fail(policy: string, message: string, cause: unknown): void {
    this.failure ??= { policy, message, cause };
  }

  /** Middleware `policy` subscribed again to its failed `next()` (a `retry`): refused, so traced. */
  retried(policy: string): void {
    if (!this.ended) this.record.addTrace({ stage: 'execute', event: 'retry_refused', policy });
  }

  /** The innermost `next()`: the body, in a run of its own inside the attempt's, with the signal `ctx` has. */
  private body(ctx: MiddlewareContext, feed: OutputFeed | undefined): MaybeLater<Settled> {
    const { record, run } = this;
    const scope = MiddlewareContext.scopeOf(ctx);
    if (scope.aborted) return new Settled(false, scope.reason);
    if (this.ended || this.failure !== undefined || run.done || record.run !== run || record.status !== undefined) {
      return new Settled(false, new Error(`the body of "${record.name}" was not started: its attempt had ended`));
    }
    const body = new BodyRun(run.exclusive);
    const collector = (this.bodyOutput = this.follow(scope, body, feed));
    invokeBody(collector, record, new ChainedBodyContext(this.host, record, body), this.maxItems, body);
    return collector.outcome();
  }

  /**
   * What a middleware returned, as a body's output: a value at once, a promise or a stream once settled
   * (an Observable, an interop observable, an async iterable: its items go to `feed` as they come).
   * Unlike a body's, a promise may resolve to a stream (an async middleware returning one): it is
   * collected. What `next()` gave, returned unchanged, passes the output below through as it is (a
   * value stays a value; its items are this level's, as they come).
   */
  private collect(returned: unknown, ctx: MiddlewareContext, feed: OutputFeed | undefined): MaybeLater<Settled> {
    if ((typeof returned !== 'object' && typeof returned !== 'function') || returned === null) return new Settled(true, returned);
    if (returned instanceof ExecuteAnswer) return returned.passThrough(feed);
    if (returned instanceof Promise) {
      return Later.from(returned as Promise<unknown>).then(
        (value) => this.collect(value, ctx, feed),
        (error: unknown) => this.thrown(error, ctx, feed),
      );
    }
    const scope = MiddlewareContext.scopeOf(ctx);
    if (scope.aborted) return new Settled(false, scope.reason); // a stream returned after the stop: never read
    const collector = this.follow(scope, new BodyRun(false), feed);
    deliverOutput(collector, this.record, collector.run, returned, this.maxItems);
    return collector.outcome();
  }

  /** What a middleware threw or rejected with: its failure — unless an `outcome.streamed`, an output thrown (see `ExecuteOutcome`). */
  private thrown(error: unknown, ctx: MiddlewareContext, feed: OutputFeed | undefined): MaybeLater<Settled> {
    return outcomeOf(error)?.kind === 'streamed' ? this.collect(error, ctx, feed) : new Settled(false, error);
  }

  /** A collector of an output in `run` (its items told to `feed`), stopped when `scope` aborts. */
  private follow(scope: Abort, run: BodyRun, feed: OutputFeed | undefined): Collector {
    const collector = new Collector(run, feed);
    scope.onAbort(() => {
      // An unsubscribed Observable never settles: it ended now, with the reason.
      if (run.stop(scope.reason)) collector.rejectBody(this.record, run, scope.reason, undefined);
    });
    return collector;
  }

  /** The context for the rest of the chain after `next(tighten)`: the same one unless it tightened something. */
  private tighten(ctx: MiddlewareContext, tightening: Tightening | undefined): MiddlewareContext {
    if (tightening === undefined) return ctx;
    if (typeof tightening !== 'object' || tightening === null) throw new TypeError(`next() takes { signal?, timeoutMs? }; received ${describeValue(tightening)}`);
    const { signal, timeoutMs } = tightening;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError(`next({ signal }) takes an AbortSignal; received ${describeValue(signal)}`);
    if (timeoutMs !== undefined && timeoutMs !== Infinity && !isPositiveDuration(timeoutMs)) {
      throw new TypeError(`next({ timeoutMs }) takes 1 to ${MAX_TIMER_MS} milliseconds, or Infinity; received ${describeValue(timeoutMs)}`);
    }
    let scope = MiddlewareContext.scopeOf(ctx);
    let { deadline } = ctx;
    if (timeoutMs !== undefined && timeoutMs !== Infinity) {
      const at = this.scheduler.now() + timeoutMs;
      if (deadline === undefined || at < deadline) {
        deadline = at;
        this.host.tightenTimeout(this.record, this.run, timeoutMs);
      }
    }
    if (signal !== undefined) {
      const parent = scope;
      const child = (scope = new Abort());
      parent.onAbort(() => child.abort(parent.reason));
      if (signal.aborted) child.abort(signal.reason);
      else {
        const onAbort = () => child.abort(signal.reason);
        const unlisten = () => signal.removeEventListener('abort', onAbort);
        signal.addEventListener('abort', onAbort, { once: true });
        child.onAbort(unlisten); // the attempt stopped: the signal, which may live long, no longer holds it
        (this.unlisten ??= []).push(unlisten);
      }
    }
    return scope === MiddlewareContext.scopeOf(ctx) && deadline === ctx.deadline ? ctx : new MiddlewareContext(this, scope, deadline);
  }

  private report(settled: Settled): void {
    this.ended = true;
    if (this.unlisten !== undefined) for (const unlisten of this.unlisten) unlisten();
    const { host, record, run, failure } = this;
    if (failure !== undefined) return host.chainFailed(record, run, { ...failure, bodyRan: this.bodyOutput !== undefined });
    if (!settled.ok) return host.rejectBody(record, run, settled.value, this.bodyOutput?.partial); // the body's own error (see decide)
    // Every object output was collected (`collect`): a streamed one's value is the kept items.
    host.resolveBody(record, run, settled.value, settled.streamed);
  }
}

/** The `ctx` of the middleware of one attempt (of those after a tightening: one of its own). State private (`#`). */
class MiddlewareContext implements ExecuteContext {
  readonly #chain: AttemptChain;
  readonly #scope: Abort;

  constructor(
    chain: AttemptChain,
    scope: Abort,
    readonly deadline: number | undefined,
  ) {
    this.#chain = chain;
    this.#scope = scope;
  }

  static scopeOf(ctx: MiddlewareContext): Abort {
    return ctx.#scope;
  }

  get tool(): ExecuteTool {
    return this.#chain.record.tool!;
  }
  get call(): ToolCall {
    return this.#chain.call;
  }
  get args(): unknown {
    return this.#chain.record.args;
  }
  get index(): number {
    return this.#chain.record.index;
  }
  get turn(): string | undefined {
    return this.#chain.record.turn;
  }
  get attempt(): number {
    return this.#chain.attempt;
  }
  get signal(): AbortSignal {
    return this.#scope.signal;
  }
  get idempotencyKey(): string {
    const { host, record } = this.#chain;
    return idempotencyKeyOf(record, () => host.subscriptionId());
  }
}

/** The body's `ctx` under a chain: its signal is its own run's (the attempt's, and any a middleware added). */
class ChainedBodyContext extends ExecutionContext {
  readonly #body: BodyRun;

  constructor(pool: CancelRestTarget, record: CallRecord, body: BodyRun) {
    super(pool, record);
    this.#body = body;
  }

  override get signal(): AbortSignal {
    return this.#body.signal;
  }
}
