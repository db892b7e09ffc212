// examples/tracing.ts — traces by the OpenTelemetry GenAI conventions: `npm run example:tracing`.
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createPipeline, defineTool } from 'toolstream';
import { toolTracing } from 'toolstream/otel';
import { z } from 'zod';

// The application's OpenTelemetry setup (NodeSDK does the same): a context manager, so the caller's
// span is the parent, and a provider with an exporter (here in memory, to print the tree below).
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
const tracer = trace.getTracer('weather-agent');

const weather = defineTool({
  name: 'get_weather',
  description: 'The weather in a city',
  input: z.object({ city: z.string() }),
  mode: 'parallel',
  // The body runs inside its call's span: a span it starts is that span's child.
  execute: ({ city }) => tracer.startActiveSpan('weather api', (span) => (span.end(), `${city}: 18°C, clear`)),
});
const remove = defineTool({ name: 'delete_file', description: 'Delete a file', input: z.object({ path: z.string() }), execute: () => 'deleted' });

const pipeline = createPipeline({
  tools: [weather, remove],
  pre: [(ctx, next) => (ctx.tool.name === 'delete_file' ? { decision: 'deny', reason: 'read-only agent' } : next())],
  observers: [toolTracing()], // add { recordArguments: true, recordResults: true } to record them
});

await tracer.startActiveSpan('invoke_agent weather', async (step) => {
  await pipeline.run([
    { id: 'call_1', name: 'get_weather', args: { city: 'Lisbon' } },
    { id: 'call_2', name: 'delete_file', args: { path: '/etc/hosts' } },
  ]);
  step.end();
});

// The trace, as a tree.
const spans = exporter.getFinishedSpans();
const print = (span: ReadableSpan, depth: number): void => {
  const { attributes: a } = span;
  const facts = a['gen_ai.tool.call.id'] === undefined ? '' : `  ${a['gen_ai.tool.call.id']} ${a['toolstream.status']}${a['error.type'] === undefined ? '' : ` error.type=${a['error.type']}`}`;
  console.log(`${'  '.repeat(depth)}${span.name}${facts}`);
  const children = spans.filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId);
  for (const child of children.sort((x, y) => x.startTime[0] - y.startTime[0] || x.startTime[1] - y.startTime[1])) print(child, depth + 1);
};
for (const root of spans.filter((s) => s.parentSpanContext === undefined)) print(root, 0);
