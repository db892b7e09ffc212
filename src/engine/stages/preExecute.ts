import { identity, type MonoTypeOperatorFunction } from 'rxjs';
import { safeParse } from 'zod/v4/core';
import type { DecisionSettings, PreSettings } from '../settings.js';
import { MonotonicGuard } from '../../tool/policy/monotonicGuard.js';
import type { CallRecord } from '../records/callRecord.js';
import type { BatchCancel } from '../records/batchCancel.js';
import { ChainDeadline, chainTimers } from '../chains/chainDeadline.js';
import { concurrentStage, isExclusiveCall, type StageScope } from '../chains/concurrentStage.js';
import { describeError } from '../../util/describe.js';
import { formatIssues } from '../../util/formatIssues.js';
import { deepFreeze, snapshotValue } from '../../util/snapshot.js';
import { runWaterfall, type WaterfallFold, type WaterfallOutcome } from '../chains/waterfall.js';
import { laterOrNow, Later } from '../../util/later.js';
import type { AbortScope } from '../../types/abortScope.js';
import type { Decision } from '../../types/decision.js';
import type { PreContext, PreDecision, StartCheck } from '../../types/policy.js';
import type { ToolCall } from '../../types/toolCall.js';
import type { ArgsIssue } from '../../types/toolError.js';

/**
 * The pre-execute stage: runs the `pre` policies as a waterfall for every admitted call, folding each
 * decision they return through a {@link MonotonicGuard} as the chain unwinds (a scan: every policy's
 * `next()` resolves to the fold so far, so a policy further out sees the effective decision and can only
 * tighten it). The record leaves with its final decision, the reasons, who decided, its trace, and its
 * possibly rewritten arguments; the guard stage acts on the decision.
 *
 * 1. A record that is already finished (intake error) passes untouched.
 * 2. `ctx.rewriteArgs` validates the new arguments with the tool's schema at once; a rejected rewrite
 *    that the policy lets propagate ends the call with `invalid_rewrite` (it never runs).
 * 3. A policy that throws or returns a non-decision denies the call (`policy_error`, fail closed); so
 *    does a chain that has not decided within `policyTimeoutMs` (its `ctx.signal` then aborts).
 * 4. Calls are decided concurrently; exclusive calls keep their place (see `concurrentStage`).
 * With no policies and `defaultDecision: 'allow'` the stage is the identity: it costs nothing.
 *
 * @example
 * ```ts
 * records$.pipe(preExecute(settings, batch), guard(settings, batch), executeCalls(settings, signal, batch));
 * ```
 */
export function preExecute(settings: PreSettings, batch: BatchCancel): MonoTypeOperatorFunction<CallRecord> {
  if (allowsEveryCall(settings)) return identity;
  const { pre, preNames, defaultDecision, policyTimeoutMs, scheduler } = settings;
  const timers = chainTimers(scheduler); // idle (no timer) whenever no chain is running

  /** Decides one call: synchronously while every policy answers at once (see `runWaterfall`). */
  const decide = (record: CallRecord, stage: StageScope): void | Later<void> => {
    const cancelled = batch.cancellationOf(record);
    if (cancelled !== undefined) return record.cancel(cancelled); // no policy runs for a cancelled turn
    // Aborts when the run does, and when this call's turn is cancelled.
    const scope = batch.scopeFor(stage, record);
    record.originalArgs = record.args;
    const folder = new PreFold(record, defaultDecision);
    const call: ToolCall = Object.freeze({ id: record.id, name: record.name, args: record.rawArgs });
    const deadline = new ChainDeadline(scope, preNames, policyTimeoutMs, timers);
    const contexts = preNames.map((policy) => new PolicyContext(record, call, deadline, policy));
    // A policy may rewrite only until it hands over: the policies after it decide on what they saw.
    const chain = runWaterfall(pre, preNames, contexts, folder, 'pre', deadline.pending, (i) => contexts[i]!.seal());
    return laterOrNow(deadline.race(chain, folder), (outcome) => decided(record, scope, contexts, outcome));
  };

  const decided = (record: CallRecord, scope: AbortScope, contexts: readonly PolicyContext[], { decision, failure }: WaterfallOutcome<PreDecision>): void => {
    for (const context of contexts) context.end(); // a policy still running after the chain settled changes nothing
    if (failure === undefined) {
      record.decision = decision.decision;
      return;
    }
    // Stopped because the turn was cancelled (cancel-rest, the run's signal): cancelled, not denied.
    const cancellation = batch.cancellationOf(record);
    if (cancellation !== undefined && scope.aborted) return record.cancel(cancellation);
    record.addTrace({ stage: 'pre', event: 'failed', policy: failure.policy, message: failure.message });
    // Not `instanceof`: a policy may throw anything, even a Proxy whose prototype lookup throws.
    const rejected = rewriteRejections.get(failure.cause as object);
    if (rejected !== undefined) {
      const { issues } = rejected;
      record.fail('error', {
        code: 'invalid_rewrite',
        message: `Not run: policy "${failure.policy}" rewrote the arguments of "${record.name}" into invalid ones:\n${formatIssues(issues)}`,
        policy: failure.policy,
        issues,
      });
    } else {
      record.decision = 'deny'; // fail closed
      record.fail('denied', {
        code: 'policy_error',
        message: `Denied: pre-execute policy "${failure.policy}" ${failure.message} (policies fail closed).`,
        stage: 'pre',
        policy: failure.policy,
        cause: failure.cause,
      });
    }
  };

  const decideOrFail = (record: CallRecord, scope: StageScope): void | Later<void> => {
    if (record.status !== undefined) return;
    try {
      const deciding = decide(record, scope);
      if (deciding instanceof Later) return deciding.then(undefined, (error: unknown) => stageFailed(record, error));
    } catch (error) {
      stageFailed(record, error);
    }
  };

  return concurrentStage(decideOrFail, isExclusiveCall, batch.signal);
}

/** The stage's own machinery failed for a call (a bug, never a policy's doing): deny it, fail closed. */
function stageFailed(record: CallRecord, error: unknown): void {
  if (record.status !== undefined) return;
  record.decision = 'deny';
  record.fail('denied', {
    code: 'policy_error',
    message: `Denied: the pre-execute stage failed (${describeError(error)}); policies fail closed.`,
    stage: 'pre',
    policy: '(pre-execute)',
    cause: error,
  });
}

/**
 * No pre-execute policy and `defaultDecision: 'allow'`: every admitted call is allowed as it arrives, so
 * the pre-execute and guard stages are the identity (and intake records the decision itself).
 */
export function allowsEveryCall(settings: DecisionSettings): boolean {
  return settings.pre.length === 0 && settings.defaultDecision === 'allow';
}

/** Thrown by `rewriteArgs` when the schema rejects the new arguments. */
class RewriteRejected extends Error {
  constructor(readonly issues: readonly ArgsIssue[]) {
    super(`the rewritten arguments fail the tool's schema:\n${formatIssues(issues)}`);
    this.name = 'RewriteRejected';
    rewriteRejections.set(this, this);
  }
}

/** Every `RewriteRejected` made, looked up by identity (a WeakMap never runs a thrown value's traps). */
const rewriteRejections = new WeakMap<object, RewriteRejected>();

/** One policy's view of the call: `rewriteArgs` knows which policy rewrote, and refuses once sealed. */
class PolicyContext implements PreContext {
  /** The policy handed over (`next()`): it may no longer rewrite. */
  #sealed = false;
  /** The chain settled: the policy may change nothing any more. */
  #ended = false;

  constructor(
    private readonly record: CallRecord,
    readonly call: ToolCall,
    private readonly deadline: ChainDeadline,
    private readonly policy: string,
  ) {}

  get signal(): AbortSignal {
    return this.deadline.signal;
  }

  /** From now on `rewriteArgs` throws: the policies after this one already decided on the arguments. */
  seal(): void {
    this.#sealed = true;
  }

  /** The chain settled: from now on `rewriteArgs` and `beforeStart` throw. */
  end(): void {
    this.#sealed = true;
    this.#ended = true;
  }

  beforeStart(check: StartCheck): void {
    if (typeof check !== 'function') throw new TypeError(`beforeStart() in policy "${this.policy}" takes a function (args, signal) => verdict`);
    if (this.#ended) throw new Error(`beforeStart() in policy "${this.policy}" after its chain ended: the call was already decided`);
    this.record.addStartCheck({ policy: this.policy, check });
  }

  get tool() {
    return this.record.tool!;
  }

  get args(): unknown {
    return this.record.args;
  }

  get input(): unknown {
    return this.record.input;
  }

  get index(): number {
    return this.record.index;
  }

  rewriteArgs(args: unknown): void {
    if (this.#sealed) {
      // Rewriting after next() would hand the body arguments no later policy saw (a sandbox bypass).
      throw new Error(`rewriteArgs() after next() in policy "${this.policy}": the policies after it already decided on the arguments`);
    }
    // A snapshot: the policy keeps its own object, and changing it later changes nothing here.
    const input = snapshotValue(args);
    const outcome = safeParse(this.record.tool!.input, input);
    if (!outcome.success) {
      throw new RewriteRejected(outcome.error.issues.map(({ path, code, message }) => ({ path, code, message })));
    }
    this.record.input = input;
    this.record.args = deepFreeze(outcome.data);
    (this.record.rewrittenBy ??= []).push(this.policy);
    this.record.addTrace({ stage: 'pre', event: 'rewrite', policy: this.policy });
  }
}

const DECISIONS: ReadonlySet<unknown> = new Set<Decision>(['allow', 'ask', 'deny']);

/** The guard's scan over one call's decisions; tracks who set the final level and why. */
class PreFold implements WaterfallFold<PreDecision> {
  private readonly guard = new MonotonicGuard();

  constructor(
    private readonly record: CallRecord,
    private readonly defaultDecision: Decision,
  ) {}

  read(value: unknown): PreDecision | undefined {
    if (typeof value !== 'object' || value === null) return undefined;
    const { decision, reason } = value as Partial<PreDecision>;
    if (!DECISIONS.has(decision) || (reason !== undefined && typeof reason !== 'string')) return undefined;
    return reason === undefined ? { decision: decision! } : { decision: decision!, reason };
  }

  end(): PreDecision {
    return { decision: this.defaultDecision };
  }

  retryRefused(policy: string): void {
    this.record.addTrace({ stage: 'pre', event: 'retry_refused', policy });
  }

  fold(policy: string, { decision, reason }: PreDecision): PreDecision {
    const { record, guard } = this;
    record.addTrace({ stage: 'pre', event: 'decision', policy, decision, reason });
    const before = guard.decision;
    const refused = guard.update(decision);
    if (refused) {
      record.addTrace({ stage: 'pre', event: 'relax_refused', policy, from: refused.from, to: refused.to });
    } else if (decision !== before) {
      record.decidedBy = policy;
      record.reasons = reason === undefined ? [] : [reason];
    } else if (reason !== undefined) {
      record.reasons = [...record.reasons, reason];
    }
    return this.current();
  }

  current(): PreDecision {
    const { reasons } = this.record;
    const decision = this.guard.decision ?? this.defaultDecision;
    return reasons.length > 0 ? { decision, reason: reasons.join('; ') } : { decision };
  }
}
