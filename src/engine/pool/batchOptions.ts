/**
 * How a pool runs one batch (one subscription of the execute stage): options of the pool, not of the
 * pipeline, given by whoever runs the stages. A pipeline's own runs use {@link DEFAULT_BATCH}; a batch
 * run inside a call — a program's sub-calls, through the `PipelineHandle` — chooses its own.
 *
 * @example
 * ```ts
 * calls$.pipe(runStages(settings, signal, undefined, { cancelRest: 'none', complete: 'when-settled' }));
 * ```
 */
export interface BatchOptions {
  /**
   * What a cancel-rest reaches — a failure whose `onError` is `cancel-rest`, or a body's
   * `ctx.cancelRest()`: `turn`, the unfinished calls of its turn; `none`, nothing (whoever runs the
   * batch decides what a failure means). The run's signal cancels every call either way.
   */
  readonly cancelRest: 'turn' | 'none';
  /**
   * When the batch's output completes: `when-answered`, once every call it received has its result;
   * `when-settled`, only once every slot is free too — every body settled, or was abandoned after
   * `abortGraceMs` — so the call that runs the batch outlasts every body it started (and whatever that
   * call holds, such as its place among exclusive calls, with it).
   */
  readonly complete: 'when-answered' | 'when-settled';
}

/** A pipeline's own batch: a cancel-rest reaches the rest of its turn, and the output completes once every call has its result. */
export const DEFAULT_BATCH: BatchOptions = Object.freeze({ cancelRest: 'turn', complete: 'when-answered' });
