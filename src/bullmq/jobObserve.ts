import { describeError } from '../util/describe.js';
import type { JobEnd, JobObserver, JobWatch, ObservedJob } from '../types/traceContext.js';

/**
 * The watch `observe` gives for a job's body (`createToolWorker({ observe })`), made safe to call: an
 * observer that throws — when asked, in `run` before the body started, or in `end` — never fails the
 * job or runs its body twice; each failure is a process warning and the body goes on unwatched.
 * `undefined` when there is no observer or it gave no watch.
 *
 * @example
 * ```ts
 * const watch = watchJob(this.observe, job);
 * const outcome = await (watch === undefined ? course() : watch.run(course));
 * ```
 */
export function watchJob(observe: JobObserver | undefined, job: ObservedJob): JobWatch | undefined {
  if (observe === undefined) return undefined;
  let watch: JobWatch | undefined;
  try {
    watch = observe(job);
  } catch (error) {
    warn(job, 'observing', error);
    return undefined;
  }
  if (watch === undefined) return undefined;
  const given = watch;
  return {
    run<T>(body: () => T): T {
      // The body runs exactly once, whatever the observer's `run` does around it.
      let ran: { readonly returned: T } | { readonly threw: unknown } | undefined;
      try {
        given.run(() => {
          try {
            const returned = body();
            ran = { returned };
            return returned;
          } catch (error) {
            ran = { threw: error };
            throw error;
          }
        });
      } catch (error) {
        if (ran === undefined) {
          warn(job, 'running', error);
          return body();
        }
        if ('threw' in ran) throw ran.threw;
        warn(job, 'running', error); // it threw after the body returned: the body's output stands
        return ran.returned;
      }
      if (ran === undefined) {
        warn(job, 'running', new Error('its run() did not call the body'));
        return body();
      }
      if ('threw' in ran) throw ran.threw; // its run() swallowed the body's error: the body's error stands
      return ran.returned;
    },
    end(how: JobEnd): void {
      try {
        given.end(how);
      } catch (error) {
        warn(job, 'ending', error);
      }
    },
  };
}

function warn(job: ObservedJob, when: string, error: unknown): void {
  process.emitWarning(`the job observer failed ${when} job ${job.jobId} (${job.tool}): ${describeError(error)}`, {
    type: 'ToolstreamObserverWarning',
    code: 'TOOLSTREAM_OBSERVER_ERROR',
  });
}
