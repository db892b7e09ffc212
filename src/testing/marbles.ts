import { map, timer, type Observable, type OperatorFunction } from 'rxjs';
import type { ToolResult } from '../types/toolResult.js';
import { TestingOptionError, type TestingFunction } from './errors.js';

/**
 * Each result as a short string to compare in a marble test: `'id:status'` for an `ok` one,
 * `'id:status:code'` for the others (`'w:denied:approval_timeout'`, `'r:error:timeout'`,
 * `'s:cancelled:cancelled'`). A result's frame is when the pipeline emitted it; the string says what
 * it was, so one `expectObservable(...).toBe(...)` checks both.
 *
 * @example
 * ```ts
 * import { TestScheduler } from 'rxjs/testing';
 * import { statusMarbles } from 'toolstream/testing';
 *
 * const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
 * scheduler.run(({ cold, expectObservable }) => {
 *   const pipeline = createPipeline({ tools: [search], scheduler });
 *   const calls = cold('(ab|)', { a: { id: 'a', name: 'search', args: { query: 'x' } }, b: { id: 'b', name: 'nope', args: {} } });
 *   expectObservable(calls.pipe(pipeline.operator(), statusMarbles())).toBe('(ab|)', { a: 'a:ok', b: 'b:error:unknown_tool' });
 * });
 * ```
 */
export function statusMarbles(): OperatorFunction<ToolResult, string> {
  return map((result) => (result.status === 'ok' ? `${result.id}:ok` : `${result.id}:${result.status}:${result.error.code}`));
}

/**
 * An answer that comes `frames` after it is asked for: an Observable that emits `value` and completes
 * then, for an approver, a policy or a result middleware to return (they take the first value as their
 * answer, and unsubscribe it at their deadline). It runs on the default scheduler, which
 * `TestScheduler.run` turns to virtual time: inside `run`, `answerIn(30, v)` answers at frame 30 after
 * the subscription, exactly, on the scheduler the pipeline was given (`scheduler: testScheduler`);
 * outside `run` it waits 30 real milliseconds. `answerIn(0, v)` answers at the same frame, but not
 * during `subscribe` (as `timer(0)`): to answer at once, return the value itself.
 *
 * @param frames Virtual milliseconds (frames) to wait: a finite number, at least 0.
 * @param value The answer.
 * @throws {TestingOptionError} when `frames` is not a finite number of at least 0.
 *
 * @example
 * ```ts
 * import { askTools, createPipeline } from 'toolstream';
 * import { answerIn, statusMarbles } from 'toolstream/testing';
 *
 * scheduler.run(({ cold, expectObservable }) => {
 *   // A human who says yes 30 ms after being asked.
 *   const pipeline = createPipeline({ tools, pre: [askTools(['write_file'])], approve: () => answerIn(30, 'allowed-once'), scheduler });
 *   const write = { id: 'w', name: 'write_file', args: { path: 'notes.md', text: 'hi' } };
 *   expectObservable(cold('a|', { a: write }).pipe(pipeline.operator(), statusMarbles())).toBe('30ms (a|)', { a: 'w:ok' });
 * });
 * ```
 */
export function answerIn<const T>(frames: number, value: T): Observable<T> {
  return after('answerIn', frames, value);
}

/**
 * A tool body that takes `frames` and then gives `value`: an Observable that emits it and completes
 * then, for a tool's `execute` to return in a marble test. It runs on the default scheduler, as
 * {@link answerIn} does (virtual inside `TestScheduler.run`). An Observable body streams: the call's
 * result is `streamed: true` with `value: [value]`. When the call is aborted (its `timeoutMs`, a
 * cancel-rest, the run's signal) the pipeline unsubscribes it, so the body ends at that frame, as a
 * body that honours its signal does.
 *
 * @param frames Virtual milliseconds (frames) the body runs for: a finite number, at least 0.
 * @param value Its one item.
 * @throws {TestingOptionError} when `frames` is not a finite number of at least 0.
 *
 * @example
 * ```ts
 * import { defineTool } from 'toolstream';
 * import { bodyTaking, statusMarbles } from 'toolstream/testing';
 *
 * const slow = defineTool({ name: 'slow', description: 'Ten frames', input: z.object({}), mode: 'parallel', timeoutMs: 5, execute: () => bodyTaking(10, 'done') });
 * scheduler.run(({ cold, expectObservable }) => {
 *   const pipeline = createPipeline({ tools: [slow], scheduler });
 *   expectObservable(cold('a|', { a: { id: 'a', name: 'slow', args: {} } }).pipe(pipeline.operator(), statusMarbles())).toBe('5ms (a|)', { a: 'a:error:timeout' });
 * });
 * ```
 */
export function bodyTaking<const T>(frames: number, value: T): Observable<T> {
  return after('bodyTaking', frames, value);
}

function after<T>(where: TestingFunction, frames: number, value: T): Observable<T> {
  if (typeof frames !== 'number' || !Number.isFinite(frames) || frames < 0) throw new TestingOptionError(where, 'frames', 'a finite number of at least 0', frames);
  return timer(frames).pipe(map(() => value));
}
