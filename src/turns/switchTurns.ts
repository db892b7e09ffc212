import { Observable, type OperatorFunction } from 'rxjs';
import { subscribeAsChild } from '../stream/subscribeAsChild.js';
import type { ToolResult } from '../types/toolResult.js';
import type { SwitchTurnsOptions, TurnProject } from '../types/turns.js';
import { turnOf, type Turn } from './turn.js';
import type { Pipeline } from '../types/pipeline.js';

const SUPERSEDED = () => 'superseded by the next turn';

/**
 * Runs a turn per value — `project(value)`'s model stream through `pipeline.operator()`, a run of its
 * own — and switches to the next value gracefully: `switchMap` for a conversation, without losing the
 * results the next request needs (with `switchMap` every result of the interrupted turn is dropped,
 * finished ones too, and the provider rejects calls that have no result).
 *
 * 1. A value starts a turn when none runs. Its results come out as they come, in model order.
 * 2. A value that comes while a turn runs aborts that turn with `options.reason(next)` and waits:
 *    - the aborted turn still answers every call it received — finished ones as they ended, the others
 *      `cancelled` with `abortReason` — and reads no more of its model stream;
 *    - no body of it starts after the abort (its bodies still running see their signal abort; like two
 *      runs of a pipeline, the next turn's bodies do not wait for them to settle).
 * 3. A newer value replaces a waiting one, which is never projected (the latest wins, as with `switchMap`).
 * 4. When the aborted turn has answered every call, the waiting value's turn starts. Turns never
 *    overlap: the output is the turns' results one turn after the other.
 * 5. The source's completion does not abort the running turn: the output completes after it (and after
 *    a waiting one). Unsubscribing drops everything, as for `operator()`, and aborts the running
 *    turn's signal. The source's error is forwarded at once.
 * 6. A turn's own failure is forwarded: its model stream's error as the `SourceError` its run gives
 *    (holding the turn's results), which ends the output. To go on with the next message instead,
 *    `catchError` in `project`.
 *
 * `project` gets the turn's signal (pass it to the model request) and the value's index.
 *
 * @example
 * ```ts
 * import { switchTurns } from 'toolstream';
 * import { fromAnthropicStream } from 'toolstream/anthropic';
 *
 * userMessages$
 *   .pipe(
 *     switchTurns(
 *       pipeline,
 *       (message, { signal }) => fromAnthropicStream(client.messages.stream(requestFor(message), { signal })),
 *       { reason: (next) => `the user wrote: ${next}` },
 *     ),
 *   )
 *   .subscribe((result) => history.push(result)); // every call of every turn answered, once, in order
 * ```
 */
export function switchTurns<T>(pipeline: Pick<Pipeline, 'operator'>, project: TurnProject<T>, options: SwitchTurnsOptions<T> = {}): OperatorFunction<T, ToolResult> {
  const reasonOf = options.reason ?? SUPERSEDED;
  return (values) =>
    new Observable<ToolResult>((subscriber) => {
      let running: Turn | undefined; // the turn whose results are coming out
      let aborted = false; // the running turn was told to stop; a value waits for its end
      let waiting: { readonly value: T; readonly index: number } | undefined;
      let index = 0;
      let valuesEnded = false;

      const start = (value: T, at: number): void => {
        const turn = turnOf(pipeline, project, options, value, at);
        running = turn;
        aborted = false;
        subscribeAsChild(subscriber, turn.results, {
          next: (result) => subscriber.next(result),
          error: (error: unknown) => subscriber.error(error),
          complete: () => {
            running = undefined;
            const next = waiting;
            waiting = undefined;
            if (next !== undefined) start(next.value, next.index);
            else if (valuesEnded) subscriber.complete();
          },
        });
      };

      subscribeAsChild(subscriber, values, {
        next: (value) => {
          const at = index++;
          if (running === undefined) return start(value, at);
          waiting = { value, index: at }; // first: aborting may end the running turn at once, and start it
          if (aborted) return;
          aborted = true;
          let reason: unknown;
          try {
            reason = reasonOf(value);
          } catch (error) {
            return subscriber.error(error);
          }
          running.abort(reason);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          valuesEnded = true;
          if (running === undefined) subscriber.complete();
        },
      });
    });
}
