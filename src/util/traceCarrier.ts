import type { CallKey } from '../types/slots.js';
import type { ToolContext } from '../types/tool.js';
import type { TraceCarrier } from '../types/traceContext.js';
import { callKey, slotsOf } from './slots.js';

/**
 * The slot where a tracing layer (`toolTracing()` of `toolstream/otel`) leaves, for each call it
 * traces, a function that writes the trace context active where it is called — in the call's body,
 * its span — into a carrier. A body that sends the call on to another process (a remote tool's job)
 * calls it, so the work there joins the trace; without a tracing layer the slot is empty and nothing
 * is sent. Nothing of OpenTelemetry is imported for it.
 *
 * @example
 * ```ts
 * call.slots.set(TRACE_CARRIER, () => inject(context.active()));
 * ```
 */
export const TRACE_CARRIER: CallKey<() => TraceCarrier | undefined> = callKey<() => TraceCarrier | undefined>('toolstream.traceCarrier');

/**
 * The trace context to send on with the work of the body that received `ctx`: what the tracing layer
 * writes for the context active now (the call's span, or a span the body started inside it);
 * `undefined` without a tracing layer, or when its propagator wrote nothing.
 *
 * @example
 * ```ts
 * const payload = { ...job, tc: traceCarrierOf(ctx) };
 * ```
 */
export function traceCarrierOf(ctx: ToolContext): TraceCarrier | undefined {
  const carrier = slotsOf(ctx)?.get(TRACE_CARRIER)?.();
  return carrier === undefined || Object.keys(carrier).length === 0 ? undefined : carrier;
}

/**
 * `value` as a carrier if it is one (an object of string fields, at most `maxFields`, each at most
 * `maxChars` long: W3C `tracestate` is at most 512), else `undefined`: what a process takes from
 * outside before a propagator reads it.
 *
 * @example
 * ```ts
 * const carrier = asTraceCarrier(payload.tc);
 * ```
 */
export function asTraceCarrier(value: unknown, maxFields = 8, maxChars = 8192): TraceCarrier | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  if (entries.length === 0 || entries.length > maxFields) return undefined;
  return entries.every(([, field]) => typeof field === 'string' && field.length <= maxChars) ? (value as TraceCarrier) : undefined;
}
