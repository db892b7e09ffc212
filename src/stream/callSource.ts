import { from, isObservable, type Observable } from 'rxjs';
import { ConfigError } from '../util/errors.js';
import type { ToolCall } from '../types/toolCall.js';
import { isCollection, pullCalls, pullIterableCalls } from './pullCalls.js';
import { stopWhenAborted } from './stopWhenAborted.js';
import type { CallSource } from '../types/pipeline.js';


/** An async iterable that is not an Observable (those are pushed, not pulled). */
export function isPullable(calls: CallSource): calls is AsyncIterable<ToolCall> {
  return typeof calls === 'object' && calls !== null && !isObservable(calls) && Symbol.asyncIterator in calls;
}

/** A sync iterable that is not an Observable (an array, a generator). */
function isIterable(calls: CallSource): calls is Iterable<ToolCall> {
  return typeof calls === 'object' && calls !== null && !isObservable(calls) && Symbol.iterator in calls;
}

/**
 * The calls of a `run()` / `events()` source as an Observable, pulled with backpressure (`pullLimit`
 * unanswered at most; `undefined`: pushed as fast as they come) — a sync iterable only when `pullSync`.
 */
export function sourceOfCalls(
  calls: CallSource,
  pullLimit: number | undefined,
  pullSync: boolean,
  signal: AbortSignal | undefined,
): { readonly source: Observable<ToolCall>; readonly pulled: { answered(): void } | undefined } {
  const pulled = pullLimit === undefined ? undefined : pullerOf(calls, pullLimit, pullSync, signal);
  const source = pulled?.calls ?? toObservable(calls);
  // An array (a collection, given at once) is read to its end, aborted or not: each call is answered.
  return { source: isIterable(calls) && !isPullable(calls) && isCollection(calls) ? source : source.pipe(stopWhenAborted(signal)), pulled };
}

/** The puller for `calls`: an async iterable's, a sync iterable's when `pullSync`; none for other sources. */
function pullerOf(calls: CallSource, pullLimit: number, pullSync: boolean, signal: AbortSignal | undefined) {
  if (isPullable(calls)) return pullCalls(calls, pullLimit);
  if (pullSync && isIterable(calls)) return pullIterableCalls(calls, pullLimit, signal);
  return undefined;
}

/** The source as an Observable, as given (pushed). @throws {ConfigError} for something that is no source of calls. */
export function toObservable(calls: CallSource): Observable<ToolCall> {
  if (isObservable(calls)) return calls;
  if (
    typeof calls === 'object' &&
    calls !== null &&
    (Symbol.iterator in calls || Symbol.asyncIterator in calls)
  ) {
    return from(calls);
  }
  throw new ConfigError('run', 'calls', 'an array, iterable, async iterable or Observable of calls', calls);
}
