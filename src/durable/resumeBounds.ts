import { isDurableProgram } from './durableProgram.js';
import { isReattaching } from './reattach.js';
import { stricter } from '../tool/policy/monotonicGuard.js';
import type { JournalStore } from '../types/journal.js';
import type { Approver, PrePolicy } from '../types/policy.js';
import type { AnyTool } from '../types/tool.js';
import { argsHash } from './canonical.js';
import type { GivenAnswer, ResumePlan } from './settings.js';
import { foldTurn } from './turnState.js';

/**
 * What bounds a resumed turn's decisions by what its journal says: the decision journaled for each call,
 * and the answers given to its approvals.
 */

/**
 * Resuming, the decision journaled before bounds today's: the outermost pre policy runs the whole chain
 * first (`next()`), then folds the journaled decision in last — so no policy inside, answering early
 * or failing to call `next()`, can skip it, and the monotonic guard keeps the stricter of the two. A
 * call never decided before passes.
 */
export function journaledBound(plan: ResumePlan): PrePolicy {
  return function journal(ctx, next) {
    const call = plan.journaled.get(ctx.index);
    const bound = call?.decision;
    if (bound === undefined) return undefined;
    return next().then((today) => {
      if (stricter(today.decision, bound) === today.decision) return undefined; // as strict already
      const reasons = call!.pending?.reasons ?? [];
      return { decision: bound, reason: reasons.length > 0 ? reasons.join('; ') : 'as decided before the turn was resumed' };
    });
  };
}

/** What the resume's approver needs. */
export interface ResumeApproval {
  readonly plan: ResumePlan;
  /** The pipeline's own approver, for an `ask` the journal knows nothing of. */
  readonly approve: Approver | undefined;
  readonly store: JournalStore;
  readonly turn: string;
  /** A given answer admitted call `index`: journal it. */
  answered(index: number, given: GivenAnswer): void;
}

/**
 * Resuming, the approver: a call with an answer given is answered by it — for the same arguments,
 * once (the token's nonce is consumed in the store); a call still waiting stays suspended; any other
 * `ask` goes to the pipeline's approver.
 */
export function resumeApprover({ plan, approve, store, turn, answered }: ResumeApproval): Approver {
  /**
   * Whether the call's body was started by some process (the journal says so): an approval whose nonce
   * is consumed but whose call never started was used by a process that stopped before the body — the
   * approval still admits that one run. (While a lease is live no other process drives the turn.)
   */
  const startedBefore = async (index: number): Promise<boolean> => foldTurn(await store.read(turn)).get(index)?.started ?? false;
  /** An answer given to `resume` admits the call it was given for: for the same arguments, once. */
  const useGiven = async (index: number, args: unknown, given: GivenAnswer) => {
    if (argsHash(args) !== given.claims.argsHash) throw new Error('the approval was given for other arguments; it must be asked again');
    if (!(await store.consume(turn, given.claims.nonce)) && (await startedBefore(index))) {
      throw new Error('the approval was already used');
    }
    answered(index, given);
    return given.answer;
  };
  // Not async: the pipeline's approver answers as it does without a resume (at once, or with a stream).
  return (request, signal) => {
    const given = plan.answers.get(request.index);
    if (given !== undefined) return useGiven(request.index, request.args, given);
    const call = plan.journaled.get(request.index);
    // An answer journaled before admits the call it was given for, without asking again: one whose
    // body never started (its process stopped in between), a program running again, or a body that
    // re-attaches to the job it started.
    if (call?.answered !== undefined && (!call.started || runsAgain(request.tool))) return call.answered;
    if (call?.pending !== undefined) return 'suspend';
    if (approve === undefined) throw new Error('no approver is configured');
    return approve(request, signal);
  };
}

/** A started call of this tool runs again on resume without repeating its effect. */
export function runsAgain(tool: AnyTool | undefined): boolean {
  return isDurableProgram(tool) || isReattaching(tool);
}
