import { describeError, describeValue } from './describe.js';

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
 *
 * Never rejects.
 */
export async function runWaterfall<Ctx, D>(
  policies: readonly WaterfallPolicy<Ctx, D>[],
  names: readonly string[],
  contexts: readonly Ctx[],
  folder: WaterfallFold<D>,
  stage: 'pre' | 'post',
  /** The positions of the policies still running, most recent last (to blame one on a timeout). */
  pending: Set<number>,
  /** Told when policy `i` hands over to the rest of the chain (calls `next()`). */
  onNext?: (i: number) => void,
): Promise<WaterfallOutcome<D>> {
  let failure: WaterfallFailure | undefined;
  const fail = (policy: string, message: string, cause: unknown) => {
    failure ??= { policy, message, cause };
  };

  const dispatch = async (i: number): Promise<D> => {
    if (i === policies.length) return folder.fold('(default)', folder.end());
    const name = names[i]!;
    let downstream: Promise<D> | undefined;
    const next = (): Promise<D> => {
      if (downstream !== undefined) {
        return Promise.reject(new Error(`next() called twice in ${stage}-execute policy "${name}"`));
      }
      onNext?.(i);
      downstream = dispatch(i + 1);
      return downstream;
    };

    let returned: unknown;
    pending.add(i);
    try {
      returned = await policies[i]!(contexts[i]!, next);
    } catch (error) {
      fail(name, `threw: ${describeError(error)}`, error);
    }
    pending.delete(i);
    if (downstream !== undefined) await downstream; // never rejects
    if (failure !== undefined) return folder.current();
    if (returned === undefined) return downstream ?? next();
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

  const decision = await dispatch(0);
  return { decision, failure };
}
