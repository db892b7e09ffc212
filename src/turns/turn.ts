import { defer, Observable } from 'rxjs';
import { subscribeAsChild } from '../stream/subscribeAsChild.js';
import type { Pipeline } from '../types/pipeline.js';
import type { ToolResult } from '../types/toolResult.js';
import type { TurnOptions, TurnProject } from '../types/turns.js';

/** One turn of `switchTurns` or `queueTurns`: its results, and how to abort it. */
export interface Turn {
  /** The turn's results, in model order; cold: each subscription is a run. */
  readonly results: Observable<ToolResult>;
  /**
   * Aborts the turn's signal with `reason`: its pipeline reads no more of its calls and starts no body,
   * and answers each call it received (`cancelled`, carrying the reason, for those not finished).
   */
  abort(reason: unknown): void;
}

/**
 * The turn of `value`: `project`'s calls through a subscription of `pipeline.operator()` of its own,
 * with a signal of its own — the project's and the run's. The signal aborts on `abort(reason)`, and
 * when the results are unsubscribed before they ended (so a model request still streaming stops).
 * `project` is called when the results are subscribed, and not at all once the signal aborted.
 */
export function turnOf<T>(pipeline: Pick<Pipeline, 'operator'>, project: TurnProject<T>, options: TurnOptions<T>, value: T, index: number): Turn {
  const controller = new AbortController();
  const { signal } = controller;
  const results = new Observable<ToolResult>((subscriber) => {
    let ended = false;
    const calls = defer(() => project(value, { signal, index }));
    // The signal last: it is the turn's, whatever `run` returns (its type leaves the signal out).
    const operate = pipeline.operator({ ...options.run?.(value, index), signal });
    subscribeAsChild(subscriber, operate(calls), {
      next: (result) => subscriber.next(result),
      error: (error: unknown) => {
        ended = true;
        subscriber.error(error);
      },
      complete: () => {
        ended = true;
        subscriber.complete();
      },
    });
    return () => {
      if (!ended) controller.abort(new DOMException('the turn was unsubscribed', 'AbortError'));
    };
  });
  return { results, abort: (reason) => controller.abort(reason) };
}
