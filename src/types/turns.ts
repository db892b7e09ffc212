import type { ObservableInput } from 'rxjs';
import type { RunOptions } from './pipeline.js';
import type { ToolCall } from './toolCall.js';

/**
 * What a turn's `project` is given besides its value: pass the signal to the model request, so that
 * an aborted turn stops its response too.
 *
 * @example
 * ```ts
 * const project = (message: string, { signal }: TurnContext) =>
 *   fromAnthropicStream(client.messages.stream(requestFor(message), { signal }));
 * ```
 */
export interface TurnContext {
  /**
   * The turn's own signal, the one its run is given: it aborts when `switchTurns` supersedes the turn
   * (with the `reason`), or when the output is unsubscribed before the turn ended.
   */
  readonly signal: AbortSignal;
  /** The value's index among the source's values, as `concatMap` and `switchMap` count them. */
  readonly index: number;
}

/**
 * The turn's model stream: the calls of the response to `value`. Called when the turn starts, never for
 * a value superseded before it started.
 *
 * @example
 * ```ts
 * const project: TurnProject<string> = (message, { signal }) => callsOf(openModelStream(message, signal));
 * ```
 */
export type TurnProject<T> = (value: T, turn: TurnContext) => ObservableInput<ToolCall>;

/**
 * Options of `queueTurns` (and of `switchTurns`, which adds `reason`).
 *
 * @example
 * ```ts
 * messages$.pipe(queueTurns(pipeline, project, { run: (message, index) => ({ turn: `${conversationId}/${index}` }) }));
 * ```
 */
export interface TurnOptions<T> {
  /** Each turn's run options but the signal, which is the turn's own (e.g. a durable `turn` id). */
  readonly run?: (value: T, index: number) => Omit<RunOptions, 'signal'>;
}

/**
 * Options of `switchTurns`.
 *
 * @example
 * ```ts
 * messages$.pipe(switchTurns(pipeline, project, { reason: (next) => `the user wrote: ${next}` }));
 * ```
 */
export interface SwitchTurnsOptions<T> extends TurnOptions<T> {
  /**
   * What the running turn is aborted with when `next` supersedes it; its `cancelled` results carry it
   * as `abortReason`. Default: `'superseded by the next turn'`.
   */
  readonly reason?: (next: T) => unknown;
}
