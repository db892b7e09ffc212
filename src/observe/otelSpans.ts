import type { ToolResult } from '../types/toolResult.js';

/** OpenTelemetry's `SpanStatusCode.ERROR`. */
const STATUS_ERROR = 2;

/**
 * The part of an OpenTelemetry `Tracer` that `otelSpans` uses. A `Tracer` from `@opentelemetry/api`
 * fits it; toolstream itself depends on no OpenTelemetry package.
 */
export interface SpanTracer {
  /** Starts a span: `otelSpans` calls it once per result, with the call's receipt as `startTime`. */
  startSpan(
    name: string,
    options?: { startTime?: number; attributes?: Record<string, string | number | boolean> },
  ): {
    /** Marks the span failed (`code` 2, OpenTelemetry's `SpanStatusCode.ERROR`) with the error's message. */
    setStatus(status: { code: number; message?: string }): unknown;
    /** Ends the span at `endTime`, the moment the result was built. */
    end(endTime?: number): void;
  };
}

/**
 * @deprecated Use `toolTracing()` from `toolstream/otel`: spans by the OpenTelemetry GenAI conventions
 * (`execute_tool {name}`, `gen_ai.*` attributes, `error.type`), the caller's span as parent, the body
 * inside its span, and the trace carried to fleet workers. `otelSpans` keeps working unchanged; its
 * `tool.*` attributes map to `gen_ai.tool.name`, `gen_ai.tool.call.id`, `toolstream.call.index`,
 * `toolstream.status`, `toolstream.started`, `toolstream.decision`, `error.type` and
 * `toolstream.duration.*_ms`.
 *
 * A result observer that records one OpenTelemetry span per call, from the moment the call was received
 * to the moment its result was built, with the tool, the outcome and every stage's duration as
 * attributes. Failed, denied and cancelled calls get an error status. The spans are created after the
 * fact from the result's timing, so tracing adds nothing to the pipeline's hot path but one call.
 *
 * Pass a `Tracer` from your OpenTelemetry setup (any object with a compatible `startSpan`).
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 *
 * const pipeline = createPipeline({ tools, observers: [otelSpans(trace.getTracer('agent'))] });
 * ```
 */
export function otelSpans(
  tracer: SpanTracer,
  options: { readonly spanName?: (result: ToolResult) => string } = {},
): (result: ToolResult) => void {
  const spanName = options.spanName ?? ((result: ToolResult) => `tool ${result.name}`);
  return function otelSpan(result: ToolResult): void {
    const { timing } = result;
    const { durations } = timing;
    const attributes: Record<string, string | number | boolean> = {
      'tool.name': result.name,
      'tool.call_id': result.id,
      'tool.call_index': result.index,
      'tool.status': result.status,
      'tool.started': result.started,
      'tool.duration.intake_ms': durations.intake,
      'tool.duration.policy_ms': durations.policy,
      'tool.duration.queue_ms': durations.queue,
      'tool.duration.execute_ms': durations.execute,
      'tool.duration.post_ms': durations.post,
    };
    if (result.decision !== undefined) attributes['tool.decision'] = result.decision;
    if (result.error !== undefined) attributes['tool.error.code'] = result.error.code;
    const span = tracer.startSpan(spanName(result), { startTime: performance.timeOrigin + timing.receivedAt, attributes });
    if (result.status !== 'ok') span.setStatus({ code: STATUS_ERROR, message: result.error.message });
    span.end(performance.timeOrigin + timing.finishedAt);
  };
}
