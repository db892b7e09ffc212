import { defer, filter, finalize, map, Observable, type OperatorFunction } from 'rxjs';
import { ConfigError, SourceError } from '../util/errors.js';
import { runInOrder } from '../engine/runStages.js';
import { runHooks } from '../engine/chains/hooks.js';
import { availableTools } from '../engine/settings.js';
import { resolveOptions, type PipelineOptions } from './options.js';
import { DurableBatch } from '../durable/durableBatch.js';
import type { DurableSettings } from '../durable/settings.js';
import { resolveDurable } from '../durable/durableOptions.js';
import { attachDurability } from '../durable/durability.js';
import { DurableTurnError } from '../durable/errors.js';
import { pendingApprovals as listPending, planResume } from '../durable/resumePlan.js';
import { bindToPipeline } from '../engine/layerState/pipelineAware.js';
import { LAYER_HOOKS } from '../util/layerObserver.js';
import { isPullable, sourceOfCalls, toObservable } from '../stream/callSource.js';
import { stopWhenAborted } from '../stream/stopWhenAborted.js';
import { subscribeAsChild } from '../stream/subscribeAsChild.js';
import { ReorderWindow } from '../stream/reorderWindow.js';
import { runWithEvents, type HookedStages } from '../observe/eventLayer.js';
import type { PipelineEvent, PipelineResultEvent } from '../types/events.js';
import type { CallHooks } from '../types/hooks.js';
import type { PendingApproval } from '../types/pendingApproval.js';
import type { ToolCall } from '../types/toolCall.js';
import type { CallSource, Pipeline, ResumeOptions, RunOptions } from '../types/pipeline.js';
import type { ToolResult } from '../types/toolResult.js';

/**
 * Build a pipeline: intake → pre-execute → guard → execute → post-execute → result → reorder.
 * Options are validated now, so a misconfiguration throws here rather than on the first call.
 *
 * @throws {ConfigError} naming the first invalid option.
 *
 * @example
 * ```ts
 * import { createPipeline, defineTool } from 'toolstream';
 * import { z } from 'zod';
 *
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Add two numbers',
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   mode: 'parallel',
 *   execute: ({ a, b }) => a + b,
 * });
 *
 * const pipeline = createPipeline({ tools: [add], concurrency: 4 });
 * const results = await pipeline.run([
 *   { id: '1', name: 'add', args: '{"a":1,"b":2}' },
 *   { id: '2', name: 'add', args: { a: 'x' } },
 * ]);
 * // results[0].content === '3'; results[1].error.code === 'invalid_args'
 * ```
 */
export function createPipeline(options: PipelineOptions): Pipeline {
  const resolved = resolveOptions(options);
  const settings = bindToPipeline(resolved.settings);
  const eventSettings = resolved.events; // the events layer's own options: the engine carries none
  const { layers } = resolved;
  const durable = resolveDurable(options);
  const tools = Object.freeze([...settings.tools.values()]);
  const available = Object.freeze(availableTools(settings, tools));

  const durableOf = (where: 'run' | 'resume' | 'pendingApprovals', turn: string): DurableSettings => {
    if (typeof turn !== 'string' || turn === '') throw new ConfigError(where, 'turn', 'a non-empty string', turn);
    if (durable === undefined) throw new ConfigError(where, 'turn', 'used only with a pipeline that has a `journal` (createPipeline({ journal, approvalSecret }))', turn);
    return durable;
  };

  /**
   * The stages of one run, given its hooks, results in model order: plain or durable. With layer
   * observers, each subscription asks each for hooks of its own (after the journal's, before the events'),
   * and tells them when it ends (`closed`), however it ends.
   */
  const tappedStages = (signal: AbortSignal | undefined, batch: DurableBatch | undefined, turn: string | undefined): HookedStages => {
    const stages: (hooks: readonly (CallHooks | undefined)[]) => OperatorFunction<ToolCall, ToolResult> =
      batch === undefined
        ? (hooks) => runInOrder(settings, signal, runHooks(hooks))
        : (hooks) => (calls) => calls.pipe(map((call) => withTurn(call, turn!)), batch.operator(signal, hooks));
    if (layers.length === 0) return (hooks) => stages([hooks]);
    return (hooks) => (calls) =>
      defer(() => {
        const layerHooks = layers.map((layer) => layer[LAYER_HOOKS]());
        return calls.pipe(
          stages([...layerHooks, hooks]),
          finalize(() => {
            for (const layer of layerHooks) layer.closed?.();
          }),
        );
      });
  };

  /** The run as events; the event observers see them too. */
  const eventsOf = (stages: HookedStages): OperatorFunction<ToolCall, PipelineEvent> => runWithEvents(stages, eventSettings);

  /** The run's results; through the events layer when event observers watch every run. */
  const resultsOf = (stages: HookedStages): OperatorFunction<ToolCall, ToolResult> => {
    if (eventSettings.observers.length === 0) return stages(undefined);
    return (calls) => calls.pipe(eventsOf(stages), filter(isResultEvent), map((event) => event.result));
  };

  /** A run's results from its calls, read to their end: whether an abort stops the source is the source's. */
  const runOf = (runOptions: RunOptions): OperatorFunction<ToolCall, ToolResult> => {
    const signal = checkSignal(runOptions);
    const { turn } = runOptions;
    if (turn === undefined) return resultsOf(tappedStages(signal, undefined, undefined));
    const journaled = durableOf('run', turn);
    return (calls) => defer(() => calls.pipe(resultsOf(tappedStages(signal, new DurableBatch(settings, journaled, turn), turn))));
  };

  // A source error becomes a `SourceError`, as in `run` and `events`, but with a count, not the results:
  // each was emitted downstream already, and a long-lived subscription (one per conversation) must not
  // keep every result it gave out (issue 24's bounded memory).
  const operator = (runOptions: RunOptions = {}): OperatorFunction<ToolCall, ToolResult> => {
    const operate = runOf(runOptions);
    return (calls) =>
      new Observable<ToolResult>((subscriber) => {
        let answered = 0;
        subscribeAsChild(subscriber, operate(calls.pipe(stopWhenAborted(runOptions.signal))), {
          next: (result) => {
            answered++;
            subscriber.next(result);
          },
          error: (error: unknown) => subscriber.error(runFailure(error, [], answered)),
          complete: () => subscriber.complete(),
        });
      });
  };

  // An async iterable is pulled with backpressure: at most this many calls taken in and unanswered; so
  // is an array or another sync iterable, in a plain run. Neither is when a tool waits for the source's
  // end (`start: 'after-response'`): its calls stay unanswered until then (and the results behind them,
  // in order), so the puller would wait for answers that only the source's end can bring.
  const pullLimit = ReorderWindow.pullLimit(settings.maxPending, settings.concurrency);
  const pulls = ![...settings.tools.values()].some((tool) => tool.start === 'after-response');
  const sourceOf = (calls: CallSource, { turn, signal }: { readonly turn?: string | undefined; readonly signal?: AbortSignal | undefined }) =>
    sourceOfCalls(calls, pulls ? pullLimit : undefined, turn === undefined, signal);

  const collect = (calls: CallSource, runOptions: Parameters<typeof sourceOf>[1], operate: OperatorFunction<ToolCall, ToolResult>): Promise<ToolResult[]> => {
    const { source, pulled } = sourceOf(calls, runOptions);
    return new Promise((resolve, reject) => {
      const results: ToolResult[] = [];
      source.pipe(operate).subscribe({
        next: (result) => {
          results.push(result);
          pulled?.answered();
        },
        error: (error: unknown) => reject(runFailure(error, results)),
        complete: () => resolve(results),
      });
    });
  };

  /** A durable batch; it resolves once the turn's lease is given up, so the next request can resume it. */
  const runDurable = async (batch: DurableBatch, calls: CallSource, signal: AbortSignal | undefined, turn: string): Promise<ToolResult[]> => {
    try {
      return await collect(calls, { turn, signal }, resultsOf(tappedStages(signal, batch, turn)));
    } finally {
      await batch.closed;
    }
  };

  const run = async (calls: CallSource, runOptions: RunOptions = {}): Promise<ToolResult[]> => {
    const { turn } = runOptions;
    if (turn === undefined) return collect(calls, runOptions, runOf(runOptions));
    const signal = checkSignal(runOptions);
    return runDurable(new DurableBatch(settings, durableOf('run', turn), turn), calls, signal, turn);
  };

  const resume = async (turn: string, resumeOptions: ResumeOptions = {}): Promise<ToolResult[]> => {
    const journaled = durableOf('resume', turn);
    const signal = checkSignal(resumeOptions);
    const { calls, plan } = await planResume(journaled, turn, resumeOptions.answers ?? []);
    return runDurable(new DurableBatch(settings, journaled, turn, plan), calls, signal, turn);
  };

  const events = (calls: CallSource, runOptions: RunOptions = {}): Observable<PipelineEvent> => {
    const signal = checkSignal(runOptions);
    const { turn } = runOptions;
    const journaled = turn === undefined ? undefined : durableOf('run', turn);
    if (!isPullable(calls)) toObservable(calls); // a wrong source throws now, as `run` rejects at once
    return defer(() => {
      const batch = journaled === undefined ? undefined : new DurableBatch(settings, journaled, turn!);
      const { source, pulled } = sourceOf(calls, runOptions);
      let results: ToolResult[] = [];
      const stream = source.pipe(eventsOf(tappedStages(signal, batch, turn)));
      return new Observable<PipelineEvent>((subscriber) =>
        stream.subscribe({
          next: (event) => {
            if (event.type !== 'result') return subscriber.next(event);
            results.push(event.result);
            subscriber.next(event);
            pulled?.answered(); // the next call is taken in after the consumer saw this result
          },
          error: (error: unknown) => subscriber.error(runFailure(error, results)),
          complete: () => {
            results = [];
            // A durable turn's lease is given up before the stream completes, so the next request can resume it.
            if (batch === undefined) subscriber.complete();
            else void batch.closed.then(() => subscriber.complete());
          },
        }),
      );
    });
  };

  const pending = async (turn: string): Promise<PendingApproval[]> => listPending(durableOf('pendingApprovals', turn), turn);

  return Object.freeze(attachDurability({ tools, available, operator, run, events, resume, pendingApprovals: pending }, durable));
}

/**
 * What a run fails with: a durable turn's own error — as it is when no result was given out, and always
 * for a lost lease, with the results given out before it — else a `SourceError` holding the results.
 * `answered` counts the results given out, also when they are not kept (`operator()`).
 */
function runFailure(error: unknown, results: readonly ToolResult[], answered = results.length): unknown {
  if (error instanceof DurableTurnError) {
    if (error.code === 'lease_lost') return new DurableTurnError('lease_lost', error.message, { cause: error.cause, results: [...results] });
    if (answered === 0) return error;
  }
  return new SourceError(results, error, answered);
}

/** A call of a durable turn: it keeps its own turn (its response) for cancel-rest, or takes the run's. */
function withTurn(call: ToolCall, turn: string): ToolCall {
  return typeof call === 'object' && call !== null && (call as { turn?: unknown }).turn === undefined ? { ...call, turn } : call;
}

/**
 * The pipeline as an operator in one step: `executeTools(options)` is
 * `createPipeline(options).operator()`.
 *
 * @example
 * ```ts
 * toolCalls$.pipe(executeTools({ tools: [readFile], concurrency: 4 })).subscribe(console.log);
 * ```
 */
export function executeTools(options: PipelineOptions, runOptions?: RunOptions): OperatorFunction<ToolCall, ToolResult> {
  return createPipeline(options).operator(runOptions);
}

function checkSignal(options: RunOptions): AbortSignal | undefined {
  const { signal } = options ?? {};
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ConfigError('run', 'signal', 'an AbortSignal', signal);
  }
  return signal;
}

function isResultEvent(event: PipelineEvent): event is PipelineResultEvent {
  return event.type === 'result';
}
