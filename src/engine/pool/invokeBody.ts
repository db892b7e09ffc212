import { from, isObservable, observable as observableSymbol, type ObservableInput } from 'rxjs';
import { ItemRetainer } from '../../util/itemRetainer.js';
import { outcomeOf } from '../../util/outcome.js';
import type { ExecuteOutcome } from '../../types/outcome.js';
import type { ToolContext } from '../../types/tool.js';
import type { BodyRun } from './bodyRun.js';
import type { CallRecord } from '../records/callRecord.js';

/**
 * Where a body's outcome goes, with the run (the attempt) it is of: a retried call has a run per
 * attempt, and the report of an earlier attempt is the sink's to ignore.
 */
export interface BodySink {
  resolveBody(record: CallRecord, run: BodyRun, value: unknown, streamed: boolean): void;
  /**
   * The body failed with `error` — or ended with an `outcome.unknown`/`outcome.suspended`, returned or
   * thrown (reported here either way: it ends the attempt without an output, and the sink reads it).
   */
  rejectBody(record: CallRecord, run: BodyRun, error: unknown, partial: readonly unknown[] | undefined): void;
  /**
   * Optional: a streamed output kept an item, as it came; `kept` is every item kept so far (a live
   * view, not a copy). An execute chain's `next()` emits them live; the pool has no use for them.
   */
  keep?(run: BodyRun, kept: readonly unknown[]): void;
}

/**
 * Runs a tool body and reports its outcome to `sink` exactly once (later reports are the sink's to
 * ignore). The body may return a value, a thenable, an Observable (or interop observable) or an
 * AsyncIterable; a synchronous throw, a rejection and a stream error are all failures. Streamed items
 * are collected into an array, keeping the first `maxItems` and counting the rest into `record.omitted`.
 * Typed outcomes (`ExecuteOutcome`) are read here, returned or thrown alike (see `endWith`).
 * `run` is the attempt's (an execute chain gives the body a run of its own, inside the attempt's).
 */
export function invokeBody(sink: BodySink, record: CallRecord, ctx: ToolContext, maxItems: number, run: BodyRun = record.run!): void {
  let output: unknown;
  try {
    output = record.tool!.execute(record.args, ctx);
  } catch (error) {
    failed(sink, record, run, error, undefined, maxItems);
    return;
  }
  deliverOutput(sink, record, run, output, maxItems);
}

/**
 * Reports what a body returned (see {@link invokeBody}) to `sink`: a value at once, anything else once
 * it settled. An execute middleware's output is delivered the same way: it returns what a body would.
 */
export function deliverOutput(sink: BodySink, record: CallRecord, run: BodyRun, output: unknown, maxItems: number): void {
  try {
    if ((typeof output === 'object' && output !== null) || typeof output === 'function') {
      const then: unknown = (output as PromiseLike<unknown>).then;
      if (typeof then === 'function') {
        (then as PromiseLike<unknown>['then']).call(
          output,
          (value) => {
            const ended = outcomeOf(value);
            if (ended === undefined) sink.resolveBody(record, run, value, false);
            else endWith(sink, record, run, ended, undefined, maxItems);
          },
          (error: unknown) => failed(sink, record, run, error, undefined, maxItems),
        );
        return;
      }
      if (isObservable(output) || typeof (output as Record<symbol, unknown>)[observableSymbol as symbol] === 'function') {
        collectObservable(sink, record, run, output as ObservableInput<unknown>, maxItems);
        return;
      }
      if (typeof (output as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function') {
        void collectAsyncIterable(sink, record, run, output as AsyncIterable<unknown>, maxItems);
        return;
      }
      const ended = outcomeOf(output);
      if (ended !== undefined) return endWith(sink, record, run, ended, undefined, maxItems);
    }
  } catch (error) {
    sink.rejectBody(record, run, error, undefined);
    return;
  }
  sink.resolveBody(record, run, output, false);
}

/**
 * The body ended with a typed outcome, returned or thrown (the same: see `ExecuteOutcome`). A streamed
 * one is its output, collected here like a returned stream (`items` replace any a failed stream had
 * yielded); an unknown or suspended one ends the attempt without an output, and goes to the sink as
 * such (`Attempts.rejectBody` reads which), with the items a failed stream had yielded.
 */
function endWith(sink: BodySink, record: CallRecord, run: BodyRun, ended: ExecuteOutcome, partial: readonly unknown[] | undefined, maxItems: number): void {
  if (ended.kind !== 'streamed') return sink.rejectBody(record, run, ended, partial);
  const { items } = ended;
  if (!Array.isArray(items)) {
    void collectAsyncIterable(sink, record, run, items as AsyncIterable<unknown>, maxItems);
    return;
  }
  const kept = new ItemRetainer<unknown>(maxItems);
  for (const item of items as readonly unknown[]) kept.push(item);
  collected(sink, record, run, kept);
}

/** The body failed with `error` (thrown, rejected, or its stream's error after the items in `items`). */
function failed(sink: BodySink, record: CallRecord, run: BodyRun, error: unknown, items: ItemRetainer<unknown> | undefined, maxItems: number): void {
  const ended = outcomeOf(error);
  if (ended?.kind === 'streamed') return endWith(sink, record, run, ended, undefined, maxItems);
  if (items !== undefined) countOmitted(record, items);
  sink.rejectBody(record, run, error, items?.kept);
}

function collectObservable(
  sink: BodySink,
  record: CallRecord,
  run: BodyRun,
  output: ObservableInput<unknown>,
  maxItems: number,
): void {
  const items = new ItemRetainer<unknown>(maxItems);
  const live = sink.keep !== undefined;
  let done = false;
  const subscription = from(output).subscribe({
    next: (item) => {
      items.push(item);
      if (live && items.omitted === 0) sink.keep!(run, items.kept);
    },
    error: (error: unknown) => {
      done = true;
      failed(sink, record, run, error, items, maxItems);
    },
    complete: () => {
      done = true;
      collected(sink, record, run, items);
    },
  });
  if (!done) {
    run.stopBody = () => {
      subscription.unsubscribe();
      return true;
    };
  }
}

async function collectAsyncIterable(
  sink: BodySink,
  record: CallRecord,
  run: BodyRun,
  output: AsyncIterable<unknown>,
  maxItems: number,
): Promise<void> {
  const items = new ItemRetainer<unknown>(maxItems);
  const live = sink.keep !== undefined;
  try {
    const iterator = output[Symbol.asyncIterator]();
    /** The body's return() after an abort: it has finished only once that settled (its `finally` ran). */
    let returned: Promise<unknown> | undefined;
    run.stopBody = () => {
      // return() may reject or never settle; the loop below notices the abort on its own, and the slot
      // is held until return() settles, at most abortGraceMs.
      returned = Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => undefined);
      return false;
    };
    for (;;) {
      const step = await iterator.next();
      if (step.done || run.aborted) break;
      items.push(step.value);
      if (live && items.omitted === 0) sink.keep!(run, items.kept);
    }
    if (returned !== undefined) await returned;
  } catch (error) {
    failed(sink, record, run, error, items, maxItems);
    return;
  }
  collected(sink, record, run, items);
}

/** A stream's items are all in: the ones left out counted on the record, the kept ones the attempt's output. */
function collected(sink: BodySink, record: CallRecord, run: BodyRun, items: ItemRetainer<unknown>): void {
  countOmitted(record, items);
  sink.resolveBody(record, run, items.kept, true);
}

function countOmitted(record: CallRecord, items: ItemRetainer<unknown>): void {
  if (items.omitted > 0) record.omitted = { items: items.omitted, characters: 0, lines: 0 };
}
