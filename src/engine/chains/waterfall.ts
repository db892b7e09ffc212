import { isNoAnswer, NO_ANSWER, PendingAnswer, toAnswer } from '../../stream/answer.js';
import { ChainAnswer } from '../../stream/chainAnswer.js';
import type { AnswerInput, NextAnswer } from '../../types/answer.js';
import { describeError, describeValue } from '../../util/describe.js';
import { laterOrNow, Later, type MaybeLater } from '../../util/later.js';

/** A policy of either stage, as the waterfall runs it. */
export type WaterfallPolicy<Ctx, D> = (ctx: Ctx, next: () => NextAnswer<D>) => AnswerInput<D | undefined>;

/** Why a chain failed closed. */
export interface WaterfallFailure {
  readonly policy: string;
  readonly message: string;
  readonly cause: unknown;
}

/** How a chain ended: its folded decision, and why it failed closed if it did. */
export interface WaterfallOutcome<D> {
  readonly decision: D;
  readonly failure: WaterfallFailure | undefined;
}

/** How one stage folds the decisions of its chain, for one call. */
export interface WaterfallFold<D> {
  /**
   * A plain copy of a policy's return value if it is a decision of this stage, else `undefined`. Read
   * once: a value the policy made may have getters that change or throw.
   */
  read(value: unknown): D | undefined;
  /** The decision when the chain ends without one (the innermost decision). */
  end(): D;
  /**
   * Fold a decision in, innermost first (as the chain unwinds); returns what `next()` resolves to for
   * the policy further out: the folded decision so far.
   */
  fold(policy: string, decision: D): D;
  /** The folded decision so far (what `next()` resolves to after a failure). */
  current(): D;
  /** `policy` subscribed again to what its `next()` gave after that failed: record it (the rest never runs twice). */
  retryRefused?(policy: string): void;
}

/**
 * The members of one chain still answering, by position, most recent last: each with its pending
 * answer once it answered with a stream (so a deadline can unsubscribe it), `undefined` before that or
 * for a promise (which cannot be stopped).
 */
export type PendingAnswers = Map<number, PendingAnswer<unknown> | undefined>;

/**
 * Runs `policies` as a waterfall (koa-compose shape): policy `i` gets `(contexts[i], next)`; returning a decision
 * short-circuits, returning `undefined` passes on (as if it returned `next()`), and calling `next()`
 * runs the rest of the chain and gives its folded decision as a `NextAnswer` (await it or pipe it).
 *
 * 1. `next()` twice fails inside that policy (a programming error; if uncaught, the policy fails).
 *    Subscribing again to what `next()` gave after it failed (`retry`) gets the same error and is
 *    recorded (`folder.retryRefused`): the rest of the chain never runs twice.
 * 2. A policy that throws, rejects, errors, completes without answering, or answers something that is
 *    not a decision fails the chain. The failure is recorded, not thrown: policies further out may catch
 *    nothing and change nothing, so a failure anywhere fails closed for the whole chain. The first
 *    failure is reported.
 * 3. The part of the chain a policy started with `next()` always finishes and is folded before that
 *    policy's own decision, even if the policy returned without waiting for it.
 * 4. A policy answers with a value, a promise, or a stream whose first value counts (see `toAnswer`).
 *    While every policy answers at once (a value, or a stream that answers during subscribe), the
 *    chain runs synchronously and the outcome is returned as a value: no `Later`, no promise. From the
 *    first policy that answers later on, it is a `Later`, which goes on the moment that answer comes
 *    (a stream at frame 30 continues the chain at frame 30; a promise when it settles).
 *
 * Never throws or rejects.
 */
export function runWaterfall<Ctx, D>(
  policies: readonly WaterfallPolicy<Ctx, D>[],
  names: readonly string[],
  contexts: readonly Ctx[],
  folder: WaterfallFold<D>,
  stage: 'pre' | 'post',
  /** The policies still answering (to blame one on a timeout, and to cancel their streams). */
  pending: PendingAnswers,
  /** Told when policy `i` hands over to the rest of the chain (calls `next()`). */
  onNext?: (i: number) => void,
): MaybeLater<WaterfallOutcome<D>> {
  let failure: WaterfallFailure | undefined;
  const fail = (policy: string, message: string, cause: unknown) => {
    failure ??= { policy, message, cause };
  };

  const dispatch = (i: number): MaybeLater<D> => {
    if (i === policies.length) return folder.fold('(default)', folder.end());
    const name = names[i]!;
    let called = false;
    let downstream: MaybeLater<D> | undefined;
    const handOver = (): MaybeLater<D> => {
      called = true;
      onNext?.(i);
      return (downstream = dispatch(i + 1));
    };
    const next = (): NextAnswer<D> => {
      const retried = () => folder.retryRefused?.(name);
      if (called) return new ChainAnswer<D>(Later.rejected(new Error(`next() called twice in ${stage}-execute policy "${name}"`)), retried);
      return new ChainAnswer(handOver(), retried);
    };
    /** The policy answered: fold its answer once the part it started is done. */
    const settle = (returned: unknown): MaybeLater<D> => laterOrNow(downstream, () => decide(returned));
    const decide = (returned: unknown): MaybeLater<D> => {
      if (failure !== undefined) return folder.current();
      if (returned === undefined) return called ? downstream! : handOver();
      let decision: D | undefined;
      try {
        decision = folder.read(returned);
      } catch {
        decision = undefined;
      }
      if (decision === undefined) {
        fail(name, `returned ${describeValue(returned)}, which is not a decision`, returned);
        return folder.current();
      }
      return folder.fold(name, decision);
    };

    return answerOf(policies[i]!, contexts[i]!, next, i, name, pending, fail, settle);
  };

  return laterOrNow(dispatch(0), (decision) => ({ decision, failure }));
}

/**
 * Calls member `at` of a chain, `fn(a, b)`, and hands its answer (see `toAnswer`: a value, a promise,
 * a stream's first value) to `settle`: at once when it answered at once, else the moment the answer
 * comes. While it is answering it is in `pending` (with its `PendingAnswer` when it answered with a
 * stream, so a deadline can unsubscribe it). A throw, a rejection, a stream's error or a stream that
 * completed without a value is told to `fail` (blaming `name`), and `settle` then gets `undefined`.
 * Never throws or rejects (unless `settle` does).
 */
export function answerOf<A, B, R>(
  fn: (a: A, b: B) => unknown,
  a: A,
  b: B,
  at: number,
  name: string,
  pending: PendingAnswers,
  fail: (policy: string, message: string, cause: unknown) => void,
  settle: (value: unknown) => MaybeLater<R>,
): MaybeLater<R> {
  pending.set(at, undefined);
  let answer: unknown;
  try {
    answer = toAnswer(fn(a, b));
  } catch (error) {
    pending.delete(at);
    fail(name, failedHow(error), error);
    return settle(undefined);
  }
  if (!(answer instanceof Later)) {
    pending.delete(at);
    return settle(answer);
  }
  if (answer instanceof PendingAnswer) pending.set(at, answer);
  return answer.then(
    (value) => {
      pending.delete(at);
      return settle(value);
    },
    (error: unknown) => {
      pending.delete(at);
      fail(name, failedHow(error), error);
      return settle(undefined);
    },
  ) as Later<R>;
}

/** How a member failed, for the message: `threw: …`, or that its stream completed without answering. */
export function failedHow(error: unknown): string {
  return isNoAnswer(error) ? NO_ANSWER : `threw: ${describeError(error)}`;
}
