/**
 * `toolstream/otel` — traces by the OpenTelemetry GenAI semantic conventions: an `execute_tool` span
 * per call under the caller's span, the body inside it, and the trace carried to fleet workers. Needs
 * `@opentelemetry/api` 1.x (an optional peer dependency: `npm install @opentelemetry/api`) and an
 * OpenTelemetry SDK set up by the application.
 *
 * @example
 * ```ts
 * // agent
 * const pipeline = createPipeline({ tools, observers: [toolTracing()] });
 * // worker process
 * createToolWorker({ connection, queue, secret, tools, observe: workerTracing() });
 * ```
 *
 * @packageDocumentation
 */
export { toolTracing } from './toolTracing.js';
export type { ToolTracingOptions } from './toolTracing.js';
export { workerTracing } from './workerTracing.js';
export type { WorkerTracingOptions } from './workerTracing.js';
export type { LayerObserver } from '../util/layerObserver.js';
export type { JobEnd, JobObserver, JobWatch, ObservedJob, TraceCarrier } from '../types/traceContext.js';
