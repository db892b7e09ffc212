import { context, defaultTextMapGetter, propagation, SpanKind, SpanStatusCode, trace, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import { ConfigError } from '../util/errors.js';
import type { JobObserver } from '../types/traceContext.js';
import { ERROR_TYPE, GEN_AI_TOOL_CALL_ID, GEN_AI_TOOL_NAME } from './attributes.js';

/** Options of {@link workerTracing}. */
export interface WorkerTracingOptions {
  /** @default trace.getTracer('toolstream') */
  readonly tracer?: Tracer;
  /** Reads the trace context a job carries. @default the global propagator (`propagation`) */
  readonly propagator?: TextMapPropagator;
}

/**
 * A worker's side of `toolTracing`: pass it as `createToolWorker({ observe })` (`toolstream/bullmq`).
 * Each job's body runs in a span of its own, on the worker, that continues the trace of the agent's
 * call: a child of the call's `execute_tool` span, read from the trace context the job carries. By the
 * messaging conventions (a job taken from a queue): named `process {queue}`, kind CONSUMER, with
 * `messaging.system` (`bullmq`), `messaging.operation.type` (`process`), `messaging.destination.name`
 * and `messaging.message.id` (the job's id); and `gen_ai.tool.name`, `gen_ai.tool.call.id` and
 * `toolstream.attempt`. A body that fails (or times out, or is cancelled) ends it with an ERROR status and
 * `error.type` (`tool_failed`, `timeout`, `cancelled`). In the body `trace.getActiveSpan()` is this
 * span. A job without a trace context (its agent does not trace) starts a trace of its own.
 *
 * @throws {ConfigError} (`where: 'workerTracing'`) for a malformed option.
 *
 * @example
 * ```ts
 * import { createToolWorker } from 'toolstream/bullmq';
 * import { workerTracing } from 'toolstream/otel';
 *
 * createToolWorker({ connection, queue: 'browsers', secret, tools, observe: workerTracing() });
 * ```
 */
export function workerTracing(options: WorkerTracingOptions = {}): JobObserver {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('workerTracing', option, expected, received);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  const { tracer = trace.getTracer('toolstream'), propagator } = options;
  if (typeof tracer?.startSpan !== 'function') fail('tracer', 'an OpenTelemetry Tracer', tracer);
  if (propagator !== undefined && typeof propagator?.extract !== 'function') fail('propagator', 'an OpenTelemetry TextMapPropagator', propagator);
  return (job) => {
    const here = context.active();
    const carrier = job.traceContext;
    const parent = carrier === undefined ? here : propagator === undefined ? propagation.extract(here, carrier) : propagator.extract(here, carrier, defaultTextMapGetter);
    const span = tracer.startSpan(
      `process ${job.queue}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'bullmq',
          'messaging.operation.type': 'process',
          'messaging.operation.name': 'process',
          'messaging.destination.name': job.queue,
          'messaging.message.id': job.jobId,
          [GEN_AI_TOOL_NAME]: job.tool,
          [GEN_AI_TOOL_CALL_ID]: job.callId,
          'toolstream.attempt': job.attempt,
        },
      },
      parent,
    );
    const inside = trace.setSpan(parent, span);
    return {
      run: (body) => context.with(inside, body),
      end: (how) => {
        if (!how.ok) {
          span.setAttribute(ERROR_TYPE, how.code);
          span.setStatus({ code: SpanStatusCode.ERROR, message: how.message });
        }
        span.end();
      },
    };
  };
}
