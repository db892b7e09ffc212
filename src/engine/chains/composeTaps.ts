import { identity, pipe, type MonoTypeOperatorFunction } from 'rxjs';
import type { StageTaps } from '../runStages.js';

/**
 * Two layers' taps between the same stages: at each point, `first`'s tap, then `second`'s (a durable
 * turn restores a replayed record before the events layer reports it).
 *
 * @example
 * ```ts
 * runStages(settings, signal, composeTaps(journalTaps, eventTaps));
 * ```
 */
export function composeTaps(first: StageTaps, second: StageTaps): StageTaps {
  const both = <T>(a: MonoTypeOperatorFunction<T> | undefined, b: MonoTypeOperatorFunction<T> | undefined): MonoTypeOperatorFunction<T> =>
    pipe(a ?? identity, b ?? identity);
  return {
    received: both(first.received, second.received),
    decided: both(first.decided, second.decided),
    admitted: both(first.admitted, second.admitted),
    finished: both(first.finished, second.finished),
  };
}
