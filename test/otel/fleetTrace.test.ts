import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteTools, type RemoteTools } from '../../src/bullmq/index.js';
import { createPipeline } from '../../src/index.js';
import { toolTracing } from '../../src/otel/index.js';
import { redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';
import { startProcess, stopProcess, until, WITH_REDIS } from '../fleet/support/fleet.js';
import { explode, lookup } from './support/contracts.js';
import { setUpTracing, spanOfCall, type TestTracing } from './support/tracing.js';
import type { WrittenSpan } from './support/tracedWorker.js';

requireRedis();

const SECRET = 'the traced fleet test shares this secret, 32+ bytes';
const WORKER = resolve(import.meta.dirname, 'support/tracedWorker.ts');

describe.skipIf(!redisAvailable())(`toolTracing across the fleet: the worker's span joins the agent's trace (${WITH_REDIS})`, () => {
  const exporter = new InMemorySpanExporter();
  const queue = `traced-${randomUUID()}`;
  const prefix = `tstrace-${randomUUID()}`;
  const dir = mkdtempSync(join(tmpdir(), 'toolstream-otel-'));
  const spansFile = join(dir, 'worker-spans.jsonl');
  let tracing: TestTracing;
  let redis: TestRedis;
  let worker: ChildProcess | undefined;
  let remote: RemoteTools | undefined;

  beforeAll(async () => {
    tracing = setUpTracing(exporter);
    redis = await startRedis();
    worker = await startProcess(WORKER, { TRACED_WORKER: JSON.stringify({ url: redis.url, prefix, secret: SECRET, queue, spans: spansFile }) });
    remote = remoteTools([lookup, explode], { connection: { url: redis.url }, queue, prefix, secret: SECRET });
  }, 60_000);
  afterAll(async () => {
    await remote?.close();
    if (worker !== undefined) await stopProcess(worker);
    await redis?.stop();
    await tracing.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  /** The worker's spans written so far (whole lines only: a read may race an append). */
  const workerSpans = (): WrittenSpan[] => {
    if (!existsSync(spansFile)) return [];
    const text = readFileSync(spansFile, 'utf8');
    return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as WrittenSpan);
  };
  const workerSpanOf = async (callId: string): Promise<WrittenSpan> => {
    await until(() => workerSpans().some((span) => span.attributes['gen_ai.tool.call.id'] === callId && span.name.startsWith('process ')), 10_000, `the worker's span of ${callId}`);
    return workerSpans().find((span) => span.attributes['gen_ai.tool.call.id'] === callId && span.name.startsWith('process '))!;
  };

  it("a remote call's job carries the trace: the worker's span is a child of the agent's execute_tool span, and the body's spans are its children", async () => {
    const pipeline = createPipeline({ tools: remote!.tools, observers: [toolTracing()] });
    const step = await trace.getTracer('agent').startActiveSpan('agent step', async (span) => {
      const results = await pipeline.run([{ id: 'r1', name: 'lookup', args: { word: 'otter' } }]);
      expect(results[0]!.status).toBe('ok');
      span.end();
      return { span, value: results[0]!.value as { word: string; active: string } };
    });
    const agentSpan = spanOfCall(exporter.getFinishedSpans(), 'r1');
    expect(agentSpan.name).toBe('execute_tool lookup');
    expect(agentSpan.parentSpanContext?.spanId).toBe(step.span.spanContext().spanId);

    const onWorker = await workerSpanOf('r1');
    expect(onWorker).toMatchObject({
      name: `process ${queue}`,
      kind: SpanKind.CONSUMER,
      traceId: agentSpan.spanContext().traceId,
      parentSpanId: agentSpan.spanContext().spanId,
      attributes: { 'gen_ai.tool.name': 'lookup', 'messaging.system': 'bullmq', 'messaging.destination.name': queue, 'toolstream.attempt': 1 },
    });
    expect(onWorker.status.code).toBe(SpanStatusCode.UNSET);
    expect(step.value.active).toBe(onWorker.spanId); // the body's active span, on the worker
    await until(() => workerSpans().some((span) => span.name === 'dictionary read' && span.parentSpanId === onWorker.spanId), 5000, "the body's own span");
    expect(workerSpans().find((span) => span.name === 'dictionary read')!.traceId).toBe(agentSpan.spanContext().traceId);
  });

  it("a body that fails on the worker ends the worker's span with an ERROR status and error.type", async () => {
    const pipeline = createPipeline({ tools: remote!.tools, observers: [toolTracing()] });
    const [result] = await pipeline.run([{ id: 'r2', name: 'explode', args: {} }]);
    expect(result!.status).toBe('error');
    const onWorker = await workerSpanOf('r2');
    expect(onWorker.attributes['error.type']).toBe('tool_failed');
    expect(onWorker.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'boom on the worker' });
    const agentSpan = spanOfCall(exporter.getFinishedSpans(), 'r2');
    expect(onWorker.parentSpanId).toBe(agentSpan.spanContext().spanId);
    expect(agentSpan.status.code).toBe(SpanStatusCode.ERROR);
  });

  it("without toolTracing in the agent, the job carries no trace context: the worker's span starts a trace of its own", async () => {
    const pipeline = createPipeline({ tools: remote!.tools });
    await trace.getTracer('agent').startActiveSpan('untraced step', async (span) => {
      await pipeline.run([{ id: 'r3', name: 'lookup', args: { word: 'alone' } }]);
      span.end();
    });
    const onWorker = await workerSpanOf('r3');
    expect(onWorker.parentSpanId).toBeUndefined();
  });
});
