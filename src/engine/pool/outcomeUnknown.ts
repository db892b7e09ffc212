import { brand } from '../../util/brand.js';

/**
 * What a body rejects with when it knows its effect may or may not have happened and must not be
 * retried: a remote tool whose job's worker died mid-body (the job is not idempotent, so it was not run
 * again). The pool ends the call as an `outcome_unknown` error — a failure of its mode, like a resumed
 * call found started — instead of a `tool_error`. Internal: only `toolstream/bullmq` throws it.
 */
export class OutcomeUnknown extends Error {
  static {
    brand(this, 'OutcomeUnknown');
  }

  override readonly name = 'OutcomeUnknown';
}
