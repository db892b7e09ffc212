import { describeError, describeValue } from '../../util/describe.js';

/** A policy of either stage, as the waterfall runs it. */
export type WaterfallPolicy<Ctx, D> = (ctx: Ctx, next: () => Promise<D>) => D | undefined | PromiseLike<D | undefined>;

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
}

/** A value now, or a promise of it: the chain stays synchronous while every policy answers at once. */
export type MaybePromise<T> = T | Promise<T>;

/** `then` applied to `value` now if it is one, or once the promise fulfils: a value stays synchronous. */
export function thenOrNow<T, R>(value: MaybePromise<T>, then: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(then) : then(value);
}

/**
 * Runs `policies` as a waterfall (koa-compose shape): policy `i` gets `(contexts[i], next)`; returning a decision
 * short-circuits, returning `undefined` passes on (as if it returned `next()`), and calling `next()`
 * runs the rest of the chain and resolves to its folded decision.
 *
 * 1. `next()` twice rejects inside that policy (a programming error; if uncaught, the policy fails).
 * 2. A policy that throws or rejects, or returns something that is not a decision, fails the chain. The
 *    failure is recorded, not thrown: policies further out may catch nothing and change nothing, so a
 *    failure anywhere fails closed for the whole chain. The first failure is reported.
 * 3. The part of the chain a policy started with `next()` always finishes and is folded before that
 *    policy's own decision, even if the policy returned without awaiting it.
 * 4. While every policy returns at once (a decision or `undefined`, not a promise), the chain runs
 *    synchronously and the outcome is returned as a value; from the first policy that returns a promise
 *    on, it is a promise. (Most policies look at the call and answer: a promise and a microtask per
 *    policy were most of the policy path's cost, bench/overhead.)
 *
 * Never throws or rejects.
 */
export function runWaterfall<Ctx, D>(
  policies: readonly WaterfallPolicy<Ctx, D>[],
  names: readonly string[],
  contexts: readonly Ctx[],
  folder: WaterfallFold<D>,
  stage: 'pre' | 'post',
  /** The positions of the policies still running, most recent last (to blame one on a timeout). */
  pending: Set<number>,
  /** Told when policy `i` hands over to the rest of the chain (calls `next()`). */
  onNext?: (i: number) => void,
): MaybePromise<WaterfallOutcome<D>> {
  let failure: WaterfallFailure | undefined;
  const fail = (policy: string, message: string, cause: unknown) => {
    failure ??= { policy, message, cause };
  };

  const dispatch = (i: number): MaybePromise<D> => {
    if (i === policies.length) return folder.fold('(default)', folder.end());
    const name = names[i]!;
    let called = false;
    let downstream: MaybePromise<D> | undefined;
    const handOver = (): MaybePromise<D> => {
      called = true;
      onNext?.(i);
      return (downstream = dispatch(i + 1));
    };
    const next = (): Promise<D> => {
      if (called) return Promise.reject(new Error(`next() called twice in ${stage}-execute policy "${name}"`));
      return Promise.resolve(handOver());
    };
    /** The policy returned (or its promise settled): fold its answer once the part it started is done. */
    const settle = (returned: unknown): MaybePromise<D> => {
      pending.delete(i);
      return thenOrNow(downstream, () => decide(returned));
    };
    const decide = (returned: unknown): MaybePromise<D> => {
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

    pending.add(i);
    return answerOf(policies[i]!, contexts[i]!, next, name, fail, settle);
  };

  return thenOrNow(dispatch(0), (decision) => ({ decision, failure }));
}

/**
 * Calls one function of a chain, `fn(a, b)`, and hands what it answered to `settle`: at once when it
 * answered a value, once settled when it answered a thenable. A throw or a rejection is told to `fail`
 * (as `threw: …`, blaming `name`), and `settle` then gets `undefined`. Never throws or rejects (unless
 * `settle` does).
 */
export function answerOf<A, B, R>(
  fn: (a: A, b: B) => unknown,
  a: A,
  b: B,
  name: string,
  fail: (policy: string, message: string, cause: unknown) => void,
  settle: (value: unknown) => MaybePromise<R>,
): MaybePromise<R> {
  let returned: unknown;
  let then: unknown;
  try {
    returned = fn(a, b);
    then = (typeof returned === 'object' && returned !== null) || typeof returned === 'function' ? (returned as PromiseLike<unknown>).then : undefined;
  } catch (error) {
    fail(name, `threw: ${describeError(error)}`, error);
    return settle(undefined);
  }
  if (typeof then !== 'function') return settle(returned);
  return (async () => {
    let value: unknown;
    try {
      value = await returned;
    } catch (error) {
      fail(name, `threw: ${describeError(error)}`, error);
    }
    return settle(value);
  })();
}
