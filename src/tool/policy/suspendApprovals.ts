import type { Approver } from '../../types/policy.js';

/**
 * An approver that suspends every call it is asked about: in a durable turn each `ask`ed call waits,
 * with a signed token, for a human's answer given later to `pipeline.resume` — the web flow, where the
 * question goes out in one HTTP response and the answer comes back in another request. (Outside a
 * durable turn, suspending fails closed: the call is denied.)
 *
 * @example
 * ```ts
 * const pipeline = createPipeline({ tools, pre: [askTools(['write_*'])], approve: suspendApprovals(), journal, approvalSecret });
 * const results = await pipeline.run(calls, { turn });
 * const pending = await pipeline.pendingApprovals(turn); // send these to the human
 * ```
 */
export function suspendApprovals(): Approver {
  // A plain answer, not a promise: the call is suspended synchronously (and in virtual time, at once).
  return function suspendApprovals() {
    return 'suspend';
  };
}
