// A worker process of the traced fleet test: `node --import tsx tracedWorker.ts`, configured by
// TRACED_WORKER (JSON: url, prefix, secret, queue, spans). It sets up the OpenTelemetry SDK as an
// application would and writes every span it ends to the file `spans`, one JSON line each. Prints
// "ready" once it takes jobs; SIGTERM closes it.
import { appendFileSync } from 'node:fs';
import { trace } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createToolWorker } from 'toolstream/bullmq';
import { implementTool } from 'toolstream';
import { workerTracing } from 'toolstream/otel';
import { explode, lookup } from './contracts.js';
import { setUpTracing } from './tracing.js';

/** A span as the test reads it back from the file. */
export interface WrittenSpan {
  readonly name: string;
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Record<string, unknown>;
  readonly status: { readonly code: number; readonly message?: string };
}

const config = JSON.parse(process.env['TRACED_WORKER']!) as { url: string; prefix: string; secret: string; queue: string; spans: string };

class FileExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) {
      const written: WrittenSpan = {
        name: span.name,
        kind: span.kind,
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        parentSpanId: span.parentSpanContext?.spanId,
        attributes: { ...span.attributes },
        status: span.status,
      };
      appendFileSync(config.spans, `${JSON.stringify(written)}\n`);
    }
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

setUpTracing(new FileExporter());
const tracer = trace.getTracer('worker-test');
const worker = createToolWorker({
  connection: { url: config.url },
  queue: config.queue,
  prefix: config.prefix,
  secret: config.secret,
  observe: workerTracing(),
  tools: [
    implementTool(lookup, async ({ word }) => {
      const active = trace.getActiveSpan()?.spanContext().spanId;
      await new Promise((resolve) => setTimeout(resolve, 5));
      // A span the body starts after an await: a child of the worker's span.
      tracer.startActiveSpan('dictionary read', (span) => span.end());
      return { word, active };
    }),
    implementTool(explode, () => Promise.reject(new Error('boom on the worker'))),
  ],
});
await worker.ready();
process.stdout.write('ready\n');
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
