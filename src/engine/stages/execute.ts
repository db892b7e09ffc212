import { Observable, type OperatorFunction } from 'rxjs';
import type { PoolSettings } from '../settings.js';
import { BatchCancel } from '../records/batchCancel.js';
import { CallPool } from '../pool/callPool.js';
import type { BatchOptions } from '../pool/batchOptions.js';
import type { CallRecord } from '../records/callRecord.js';
import { subscribeAsChild } from '../../stream/subscribeAsChild.js';
import type { ReorderWindow } from '../../stream/reorderWindow.js';

/**
 * The execute stage: runs admitted calls in a bounded pool where exclusive calls are barriers, and
 * emits each record as soon as its outcome is decided (completion order; `reorderByIndex` restores
 * model order).
 *
 * Conceptually this is `segments of parallel calls → concatMap(segment → mergeMap(run, concurrency))`,
 * but that composition is not used, for three measured reasons:
 * - `mergeMap` keeps its backlog in an array drained with `shift()`, quadratic on a large synchronous
 *   source (100k calls measured 200–300× slower than a hand-written pool);
 * - it drains synchronously completing inners recursively, so ~1.5k queued calls that finish at once
 *   (intake errors, or the `cancelled` results of cancel-rest) overflow the stack, and from ~2k the
 *   stream silently never completes;
 * - segmenting would have to wait for a segment's last call before starting the next exclusive one,
 *   while a streaming source needs each call to start as soon as the rules allow.
 * Hence one fused operator over a {@link CallPool}: an O(1) queue, the barrier as "nothing running",
 * and loops instead of recursion. See `CallPool` for the state machine.
 *
 * ```
 * calls:   -p1-p2-x3-p4-|        (p = parallel, x = exclusive; bodies take 3 frames)
 * running:  p1 p2 .. x3 .. p4
 * output:  ----p1-p2--x3--p4|    (x3 starts when p1 and p2 are done; p4 when x3 is)
 * ```
 *
 * @param settings - what the pool reads of the pipeline's resolved options.
 * @param signal - aborting it cancels every unfinished call (each still gets a `cancelled` result).
 * @param batch - the subscription's cancellation, which this stage decides and the policy stages follow.
 * @param options - the pool's batch options: what a cancel-rest reaches, when the output completes.
 * @param window - the reorder window after this stage (`reorderIn`), for `maxPending`: one subscription's.
 *
 * @example
 * ```ts
 * records$.pipe(executeCalls(settings, controller.signal), reorderByIndex());
 * ```
 */
export function executeCalls(
  settings: PoolSettings,
  signal: AbortSignal | undefined,
  batch: BatchCancel = new BatchCancel(),
  options?: BatchOptions,
  window?: ReorderWindow<{ readonly index: number }>,
): OperatorFunction<CallRecord, CallRecord> {
  return (source) =>
    new Observable<CallRecord>((subscriber) => {
      const pool = new CallPool(settings, subscriber, signal, batch, options, window);
      // Teardown first, so an unsubscribe during a synchronous source already stops the pool.
      subscriber.add(() => pool.close());
      subscribeAsChild(subscriber, source, pool);
    });
}
