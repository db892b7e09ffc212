import { identity, type MonoTypeOperatorFunction } from 'rxjs';
import type { PipelineSettings } from '../options.js';
import type { CallRecord } from '../internal/callRecord.js';

/**
 * The guard stage: its place in the pipeline, where the monotonic guard and allowed-once approval will run.
 * With no policy configured (the only configuration so far) every record passes through untouched and
 * the stage costs nothing: it returns the source itself.
 *
 * @example
 * ```ts
 * records$.pipe(guard(settings)); // === records$ while no policy is configured
 * ```
 */
export function guard(_settings: PipelineSettings): MonoTypeOperatorFunction<CallRecord> {
  return identity;
}
