import type { JobOutcome } from './jobWatch.js';
import type { JobReturn, OutcomeSigner } from './outcomeSigner.js';
import type { ProgressRelay } from './remoteProgress.js';
import { RemoteToolError } from './remoteToolError.js';
import { outcome as typed } from '../util/outcome.js';

/**
 * BullMQ's own failed reason for a job that stalled more than its `maxStalledCount` times. The workers
 * set that one above their `maxReruns`, so they refuse such a job themselves first (`workers_lost`,
 * signed, saying how many times); BullMQ's comes only when that refusal was lost too.
 */
const BULLMQ_STALLED = 'job stalled more than allowable limit';

/**
 * The `result_unverified` error of a job: `what` says which part did not verify; the text is
 * toolstream's own, never the unverified data's.
 */
export function unverified(jobId: string, what: string): RemoteToolError {
  return new RemoteToolError(
    'result_unverified',
    `The job's result was not used: ${what}. Likely the workers run with another secret (or an older toolstream), or something else wrote the job's result into Redis.`,
    jobId,
  );
}

/**
 * How a settled job ended, as the agent may use it: its signed return — after every progress report it
 * signed was passed on — or its failure thrown as the body's (a `RemoteToolError`, or `outcome.unknown`
 * for the worker's `outcome_unknown`). A completed job's return value, or a failed one's reason, that is
 * not signed for this call is `result_unverified` — except BullMQ's own failure of a job that stalled
 * too often, `workers_lost` with toolstream's text. A job the agent voided is `no_worker`, or
 * `outcome.unknown` when its lost worker had started a body that may not run again.
 */
export async function settledReturn(outcome: JobOutcome, signer: OutcomeSigner, progress: ProgressRelay): Promise<JobReturn> {
  const { jobId } = signer;
  switch (outcome.kind) {
    case 'completed': {
      if (!signer.verifies(outcome.result)) throw unverified(jobId, 'what it returned is not signed with this agent\'s secret for this call');
      // A completed job says how many reports it sent (none: no read, no round trip).
      if ((outcome.result.p ?? 0) > 0) await progress.drain();
      return outcome.result;
    }
    case 'failed': {
      await progress.drain(); // a failure does not say how many it sent
      const failure = signer.readFailure(outcome.reason);
      if (failure === undefined) {
        if (outcome.reason === BULLMQ_STALLED) {
          throw new RemoteToolError('workers_lost', 'BullMQ failed the job: its workers were lost more times than it may run again (each died, lost its lock on the job, or blocked its event loop for lockMs or longer).', jobId);
        }
        throw unverified(jobId, 'its failure reason is not signed with this agent\'s secret for this call');
      }
      if (failure.code === 'outcome_unknown') throw typed.unknown(failure.text); // thrown: it may end a stream midway
      throw new RemoteToolError(failure.code, failure.text, jobId);
    }
    case 'gone':
      await progress.drain();
      throw new RemoteToolError('job_lost', `The job is gone: ${outcome.why}.`, jobId);
    case 'no_worker':
      throw new RemoteToolError('no_worker', outcome.why, jobId, { queue: outcome.queue }); // no worker started it: nothing to drain
    case 'worker_lost':
      await progress.drain(); // what its body reported before its worker was lost
      if (!outcome.idempotent) throw typed.unknown(outcome.why); // its body started: as the worker's own outcome_unknown
      throw new RemoteToolError('no_worker', outcome.why, jobId, { queue: outcome.queue });
  }
}
