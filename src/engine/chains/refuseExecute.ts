import type { CallRecord } from '../records/callRecord.js';
import type { ExecuteFailure } from './executeChain.js';

/**
 * Answers a call whose execute chain failed on its own (see `ExecuteMiddleware`): `denied` when no
 * body ran in the failed attempt — as a start check's failure, it cancels nothing — else `error` with
 * the output withheld. Either way `policy_error`, `stage: 'execute'` (middleware fail closed), traced
 * as the execute stage's failure; never a failure of the tool's mode, never retried. The call keeps
 * `started` and its `attempts`: it reached its execution (the chain), whether or not a body ran.
 *
 * @example
 * ```ts
 * refuseExecute(record, { policy: 'cache', message: 'threw: store down', cause, bodyRan: false });
 * ```
 */
export function refuseExecute(record: CallRecord, failure: ExecuteFailure): void {
  const { policy, message, cause } = failure;
  record.addTrace({ stage: 'execute', event: 'failed', policy, message });
  if (!failure.bodyRan) {
    record.decision = 'deny';
    const text = `Denied before the body ran: execute middleware "${policy}" ${message} (middleware fail closed).`;
    record.fail('denied', { code: 'policy_error', message: text, stage: 'execute', policy, cause });
    return;
  }
  const text = `The output of "${record.name}" was withheld: execute middleware "${policy}" ${message} after the body ran (middleware fail closed).`;
  record.value = undefined;
  record.fail('error', { code: 'policy_error', message: text, stage: 'execute', policy, cause });
}
