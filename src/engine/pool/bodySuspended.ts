import type { ApprovalPendingError } from '../../types/toolError.js';
import { brand } from '../../util/brand.js';

/**
 * What the body of a program in a durable turn rejects with when the program stopped because it can
 * only wait for approvals that were suspended: the pool ends its call as `suspended` with this error
 * (not as a failure: it cancels nothing), and the calls that may not overtake it are suspended too.
 * Internal: only `run_code` throws it, and only with a journal behind it.
 */
export class BodySuspended extends Error {
  static {
    brand(this, 'BodySuspended');
  }

  override readonly name = 'BodySuspended';
  constructor(readonly error: ApprovalPendingError) {
    super(error.message);
  }
}
