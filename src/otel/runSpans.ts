import { context, createContextKey, defaultTextMapSetter, propagation, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import { describeError, quote } from '../util/describe.js';
import { hostWarning } from '../util/host.js';
import { TRACE_CARRIER } from '../util/traceCarrier.js';
import type { CallView } from '../types/callView.js';
import type { ExecuteContext, ExecuteNext } from '../types/execute.js';
import type { RunHooks } from '../util/layerObserver.js';
import type { TraceCarrier } from '../types/traceContext.js';
import type { ToolResult } from '../types/toolResult.js';
import {
  argumentsText,
  ERROR_TYPE,
  EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_CALL_ARGUMENTS,
  GEN_AI_TOOL_CALL_ID,
  GEN_AI_TOOL_DESCRIPTION,
  GEN_AI_TOOL_NAME,
  GEN_AI_TOOL_TYPE,
  resultAttributes,
} from './attributes.js';

/**
 * Marks the contexts this run's bodies run in (its value: the run's `RunSpans`). The engine carries a
 * body's context on into its own work after the body (a promise's continuation keeps the context it was
 * made in), and a call arriving there — pushed from a result's callback — is not the body's child: it
 * takes the run's context. (A mark, not a set of the run's spans: a WeakSet entry per call cost more
 * than the rest of the layer.)
 */
const BODY_OF = createContextKey('toolstream.otel.bodyOf');

/** `toolTracing`'s options, resolved. */
export interface TracingSettings {
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator | undefined;
  readonly recordArguments: boolean;
  readonly recordResults: boolean;
}

/** A call's span, and the context its body runs in (the span's parent context, with the span active). */
interface CallSpan {
  readonly span: Span;
  readonly context: Context;
}

/**
 * One run's spans: the call hooks of one subscription (a `toolTracing()` layer asks for them per run).
 *
 * 1. `received` (each call, as it arrives; also one that intake failed or a resume replays): its
 *    `execute_tool {name}` span starts, INTERNAL, as a child of the context active at the arrival —
 *    the caller's. Continuations of the pool may run in a context a body of this run left active (the
 *    engine's work after a body settled runs in the context it was started in); a call arriving in
 *    one (marked `BODY_OF`) takes the run's own context (active when the run was subscribed) instead.
 * 2. `execute` (each attempt): the rest of the chain and the body run in `context.with` the span, so
 *    `trace.getActiveSpan()` in the body is the call's span and spans the body starts are its children.
 * 3. `finished` (each call, once): the outcome's attributes and status; the span ends.
 * 4. `closed` (the run's subscription ended): a call still open has no result coming — the run was
 *    unsubscribed while it waited or ran (its body was aborted) — and its span ends `cancelled`, an error,
 *    marked `toolstream.unsubscribed`.
 * Calls that never start (denied, failed at intake, cancelled) still get their span, from 1 and 3.
 */
export class RunSpans implements RunHooks {
  /** Open spans by call index (indexes are unique within a run). */
  readonly #spans = new Map<number, CallSpan>();
  /** The last arrival context, and it marked as this run's (`BODY_OF`): calls of a run mostly arrive in one context. */
  #marked: { readonly arrival: Context; readonly marked: Context } | undefined = undefined;
  /** Active when the run was subscribed: the parent for calls arriving in a context of this run's bodies. */
  readonly #runContext = context.active();

  constructor(private readonly settings: TracingSettings) {}

  received(call: CallView): void {
    try {
      const arrival = context.active();
      const parent = arrival.getValue(BODY_OF) === this ? this.#runContext : arrival;
      const span = this.settings.tracer.startSpan(`${EXECUTE_TOOL} ${call.name}`, { kind: SpanKind.INTERNAL, attributes: this.#startAttributes(call) }, parent);
      this.#spans.set(call.index, { span, context: trace.setSpan(this.#markedFor(parent), span) });
      call.slots.set(TRACE_CARRIER, this.#carrier);
    } catch (error) {
      warn(call, error);
    }
  }

  /** The layer's execute middleware (its name in a failure's trace): the attempt inside the call's span. */
  readonly execute = (ctx: ExecuteContext, next: ExecuteNext): unknown => {
    const open = this.#spans.get(ctx.index);
    return open === undefined ? next() : context.with(open.context, next);
  };

  finished(result: ToolResult): void {
    const open = this.#spans.get(result.index);
    if (open === undefined) return;
    this.#spans.delete(result.index);
    try {
      const { span } = open;
      // Sampled out, or no SDK (the API's no-op tracer): nothing would be kept, so nothing is built.
      if (!span.isRecording()) return span.end();
      span.setAttributes(resultAttributes(result, this.settings.recordResults));
      if (this.settings.recordArguments) span.setAttribute(GEN_AI_TOOL_CALL_ARGUMENTS, argumentsText(result.args));
      if (result.status !== 'ok' && result.status !== 'suspended') span.setStatus({ code: SpanStatusCode.ERROR, message: result.error.message });
      span.end();
    } catch (error) {
      warn(result, error);
    }
  }

  closed(): void {
    for (const [index, { span }] of this.#spans) {
      this.#spans.delete(index);
      try {
        span.setAttributes({ 'toolstream.status': 'cancelled', [ERROR_TYPE]: 'cancelled', 'toolstream.unsubscribed': true });
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the run was unsubscribed before the call had its result' });
        span.end();
      } catch (error) {
        hostWarning(`toolTracing failed to end the span of call #${index}: ${describeError(error)}`, WARNING);
      }
    }
  }

  /** `parent` with this run's mark (a context copy, made once for a run whose calls arrive in one context). */
  #markedFor(parent: Context): Context {
    if (this.#marked?.arrival !== parent) this.#marked = { arrival: parent, marked: parent.setValue(BODY_OF, this) };
    return this.#marked.marked;
  }

  #startAttributes(call: CallView) {
    const attributes: Record<string, string | number> = {
      [GEN_AI_OPERATION_NAME]: EXECUTE_TOOL,
      [GEN_AI_TOOL_NAME]: call.name,
      [GEN_AI_TOOL_CALL_ID]: call.id,
      [GEN_AI_TOOL_TYPE]: 'function', // executed by the application (the conventions' `function` tool)
      'toolstream.call.index': call.index,
    };
    if (call.tool !== undefined) attributes[GEN_AI_TOOL_DESCRIPTION] = call.tool.description;
    if (call.turn !== undefined) attributes['toolstream.turn'] = call.turn;
    return attributes;
  }

  /** The trace context active where it is called (in a body: its call's span), for a job to carry (`TRACE_CARRIER`). */
  readonly #carrier = (): TraceCarrier => {
    const carrier: Record<string, string> = {};
    const active = context.active();
    if (this.settings.propagator === undefined) propagation.inject(active, carrier);
    else this.settings.propagator.inject(active, carrier, defaultTextMapSetter);
    return carrier;
  };
}

const WARNING = { type: 'ToolstreamObserverWarning', code: 'TOOLSTREAM_OBSERVER_ERROR' } as const;

/** A tracer that threw: the call goes on untraced, said once as a process warning (as an observer's failure is). */
function warn(call: { readonly id: string; readonly name: string }, error: unknown): void {
  hostWarning(`toolTracing failed on call ${quote(call.id)} (${call.name}): ${describeError(error)}`, WARNING);
}
