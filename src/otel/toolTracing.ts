import { trace, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import { ConfigError } from '../util/errors.js';
import { LAYER_HOOKS, type LayerObserver } from '../util/layerObserver.js';
import { RunSpans, type TracingSettings } from './runSpans.js';

/** Options of {@link toolTracing}. */
export interface ToolTracingOptions {
  /**
   * The tracer the spans are started with.
   * @default trace.getTracer('toolstream') — the global tracer provider's (a provider registered later is used too)
   */
  readonly tracer?: Tracer;
  /**
   * Writes the trace context into fleet jobs (`toolstream/bullmq`'s remote tools), so a worker's span
   * joins the trace (see `workerTracing`).
   * @default the global propagator (`propagation`; W3C `traceparent`/`tracestate` with the OpenTelemetry SDK's defaults)
   */
  readonly propagator?: TextMapPropagator;
  /**
   * Record each call's admitted arguments as JSON text (`gen_ai.tool.call.arguments`). Opt-in, as in the
   * conventions: arguments may hold personal or secret data.
   * @default false
   */
  readonly recordArguments?: boolean;
  /**
   * Record each successful call's result text, what the model sees (`gen_ai.tool.call.result`). Opt-in,
   * as in the conventions.
   * @default false
   */
  readonly recordResults?: boolean;
}

/**
 * Traces every tool call by the OpenTelemetry GenAI semantic conventions: pass it in a pipeline's
 * `observers`. Each call gets one span, from its arrival to its result:
 *
 * - named `execute_tool {gen_ai.tool.name}`, kind INTERNAL, with `gen_ai.operation.name`
 *   (`execute_tool`), `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type` (`function`) and
 *   `gen_ai.tool.description`; toolstream's own facts under `toolstream.*` (`status`, `decision`,
 *   `attempts`, `started`, `call.index`, `turn`, and each stage's duration, `duration.*_ms`);
 * - a child of the context active where the call arrived — the caller's of `run()`, `events()` or the
 *   subscription of `operator()` — so it sits under the caller's span (an agent step, a request);
 * - the body runs inside it (each attempt): in the body `trace.getActiveSpan()` is the call's span, and
 *   spans the body starts are its children;
 * - a call that does not succeed ends with an ERROR status (the error's message) and `error.type` set
 *   to its error's `code` (`tool_error`, `timeout`, `denied`, `invalid_args`, `cancelled`, …); one
 *   that never started (denied, refused at intake, cancelled before its turn) has its span too. A
 *   suspended call (`approval_pending`) is not an error: `toolstream.suspended` holds its code;
 * - arguments and results are not recorded unless asked (`recordArguments`, `recordResults`);
 * - a remote tool's job (`toolstream/bullmq`) carries the trace context of the body that sent it, so
 *   the worker's span (`workerTracing`) continues the trace under the call's span.
 *
 * Needs `@opentelemetry/api` 1.x (an optional peer dependency) and, for the caller's span to be the
 * parent, a context manager (the SDK's `AsyncLocalStorageContextManager`, which NodeSDK installs). A
 * pipeline without it pays nothing: the layer runs only in the pipelines it is given to.
 *
 * @throws {ConfigError} (`where: 'toolTracing'`) for a malformed option.
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * import { createPipeline } from 'toolstream';
 * import { toolTracing } from 'toolstream/otel';
 *
 * const pipeline = createPipeline({ tools, observers: [toolTracing()] });
 * await trace.getTracer('agent').startActiveSpan('agent step', async (step) => {
 *   await pipeline.run(calls); // each call's `execute_tool …` span is a child of `agent step`
 *   step.end();
 * });
 * ```
 */
export function toolTracing(options: ToolTracingOptions = {}): LayerObserver {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('toolTracing', option, expected, received);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  const { tracer = trace.getTracer('toolstream'), propagator, recordArguments = false, recordResults = false } = options;
  if (typeof tracer?.startSpan !== 'function') fail('tracer', 'an OpenTelemetry Tracer', tracer);
  if (propagator !== undefined && typeof propagator?.inject !== 'function') fail('propagator', 'an OpenTelemetry TextMapPropagator', propagator);
  if (typeof recordArguments !== 'boolean') fail('recordArguments', 'a boolean', recordArguments);
  if (typeof recordResults !== 'boolean') fail('recordResults', 'a boolean', recordResults);
  const settings: TracingSettings = { tracer, propagator, recordArguments, recordResults };
  return Object.freeze({ [LAYER_HOOKS]: () => new RunSpans(settings) });
}
