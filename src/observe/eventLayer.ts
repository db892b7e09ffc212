import { Observable, type OperatorFunction } from 'rxjs';
import { describeError, describeValue } from '../util/describe.js';
import { hostWarning } from '../util/host.js';
import { retainText } from '../util/textRetainer.js';
import type { CallView } from '../types/callView.js';
import type { CallHooks } from '../types/hooks.js';
import type { EventObserver, PipelineEvent, PipelineEventBase, ProgressLimits } from '../types/events.js';
import type { JsonValue } from '../types/json.js';
import type { ToolCall } from '../types/toolCall.js';
import type { ToolError } from '../types/toolError.js';
import type { ToolResult } from '../types/toolResult.js';

/**
 * The stages of one run, given a layer's hooks to call at each moment of each call (after the hooks
 * of the layers inside: the journal's); results in model order.
 */
export type HookedStages = (hooks: CallHooks | undefined) => OperatorFunction<ToolCall, ToolResult>;

/**
 * The events layer's own options, resolved from the pipeline's (`observers`, `progress`): the engine
 * carries none of them. (The result observers and `onObserverError` are the result stage's: they are
 * called as each result is built, before the reorder and before a journal's `finished`.)
 *
 * @example
 * ```ts
 * const events: EventSettings = { observers: [{ event: (e) => log(e) }], progress: { maxChars: 10_000, maxEvents: 1000 }, clock: () => performance.now() };
 * ```
 */
export interface EventSettings {
  /** The event observers (objects with `event`); when there are any, every run goes through this layer. */
  readonly observers: readonly EventObserver[];
  /** How much a body may report with `ctx.progress(value)`, per call. */
  readonly progress: ProgressLimits;
  /** The pipeline's clock, which every event's `at` is read from: the engine's (`IntakeSettings.clock`). */
  readonly clock: () => number;
}

/**
 * The run as a stream of {@link PipelineEvent}s: a layer over the stages, like the durable journal,
 * that watches every moment of every call through the engine's call hooks (`CallHooks`) and turns
 * each into an event. Each event goes to the subscriber and to the pipeline's event observers, in the
 * order it happened; `result` events follow the model order of the stages' output.
 *
 * @example
 * ```ts
 * calls$.pipe(runWithEvents((hooks) => runStages(settings, signal, runHooks([hooks])), { observers, progress, clock }));
 * ```
 */
export function runWithEvents(
  stages: HookedStages,
  { observers, progress, clock }: EventSettings,
): OperatorFunction<ToolCall, PipelineEvent> {
  return (calls) =>
    new Observable<PipelineEvent>((subscriber) => {
      const layer = new EventLayer(progress, clock, (event) => {
        subscriber.next(event);
        for (const observer of observers) notify(observer, event);
      });
      return calls.pipe(stages(layer)).subscribe({
        next: (result) => layer.emit({ type: 'result', ...base(result, clock()), result }),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}

/** One run's events: its hooks, each turning a moment of a call into an event. */
class EventLayer implements CallHooks {
  /** Progress reports per call index, while the call runs. */
  readonly #reports = new Map<number, number>();

  constructor(
    private readonly limits: ProgressLimits,
    private readonly clock: () => number,
    readonly emit: (event: PipelineEvent) => void,
  ) {}

  received(record: CallView): void {
    this.emit({ type: 'received', ...base(record, this.clock()), done: record.status !== undefined });
  }

  decided(record: CallView): void {
    if (record.decision === undefined) return; // failed at intake, replayed, or cancelled before any policy
    this.emit({ type: 'decided', ...base(record, this.clock()), decision: record.decision, decidedBy: record.decidedBy, reasons: record.reasons });
  }

  finished(result: ToolResult): void {
    this.#reports.delete(result.index);
    this.emit({ type: 'finished', ...base(result, this.clock()), status: result.status, result });
  }

  approvalRequested(record: CallView, reasons: readonly string[]): void {
    this.emit({ type: 'approval-requested', ...base(record, this.clock()), reasons });
  }

  approvalAnswered(record: CallView, approved: boolean, answer: string): void {
    this.emit({ type: 'approval-answered', ...base(record, this.clock()), approved, answer });
  }

  started(record: CallView): void {
    this.emit({ type: 'started', ...base(record, record.startedAt) });
  }

  progress(record: CallView, value: unknown): void {
    // Only while the body's outcome is open: a report after its result (a body that ignores its
    // aborted signal) would follow the `finished` event.
    if (!record.started || record.status !== undefined) return;
    const sequence = (this.#reports.get(record.index) ?? 0) + 1;
    if (sequence > this.limits.maxEvents) return;
    this.#reports.set(record.index, sequence);
    this.emit({ type: 'progress', ...base(record, this.clock()), ...boundedJson(value, this.limits.maxChars), sequence });
  }

  retry(record: CallView, attempt: number, error: ToolError, delayMs: number): void {
    this.emit({ type: 'retry', ...base(record, this.clock()), attempt, error, delayMs });
  }
}

function base(call: CallView | ToolResult, at: number): PipelineEventBase {
  return { index: call.index, id: call.id, name: call.name, turn: call.turn, at };
}

/**
 * A JSON copy of a progress value (so later mutation by the body changes nothing), or, when its text is
 * over `maxChars`, the text cut with an omission note; a value JSON cannot hold becomes a note.
 */
function boundedJson(value: unknown, maxChars: number): { readonly value: JsonValue; readonly truncated: boolean } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value) as string | undefined;
  } catch (error) {
    return { value: `[progress value not JSON: ${describeError(error)}]`, truncated: true };
  }
  if (text === undefined) return { value: `[progress value not JSON: ${describeValue(value)}]`, truncated: true };
  if (text.length <= maxChars) return { value: JSON.parse(text) as JsonValue, truncated: false };
  return { value: retainText(text, { maxChars }).text, truncated: true };
}

function notify(observer: EventObserver, event: PipelineEvent): void {
  try {
    observer.event(event);
  } catch (error) {
    // As for result observers: never into the stream, never thrown later.
    hostWarning(`an event observer failed on the ${event.type} event of call ${JSON.stringify(event.id)} (${event.name}): ${describeError(error)}`, {
      type: 'ToolstreamObserverWarning',
      code: 'TOOLSTREAM_OBSERVER_ERROR',
    });
  }
}
