import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';

/** The real SDK as an application sets it up: an async-local context manager, the W3C propagator, a provider over `exporter`. */
export interface TestTracing {
  readonly provider: BasicTracerProvider;
  /** Clears the globals this set. */
  stop(): Promise<void>;
}

export function setUpTracing(exporter: SpanExporter = new InMemorySpanExporter()): TestTracing {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  return {
    provider,
    async stop() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The one finished span whose `gen_ai.tool.call.id` is `id`. */
export function spanOfCall(spans: readonly ReadableSpan[], id: string): ReadableSpan {
  const found = spans.filter((span) => span.attributes['gen_ai.tool.call.id'] === id);
  if (found.length !== 1) throw new Error(`expected one span of call ${id}, found ${found.length}`);
  return found[0]!;
}
