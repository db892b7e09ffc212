import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { from, lastValueFrom, Subject, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, memoryJournal, type ToolCall } from '../../src/index.js';
import { toolTracing } from '../../src/otel/index.js';
import { setUpTracing, spanOfCall, type TestTracing } from './support/tracing.js';

const exporter = new InMemorySpanExporter();
let tracing: TestTracing;
beforeAll(() => {
  tracing = setUpTracing(exporter);
});
afterAll(() => tracing.stop());
afterEach(() => exporter.reset());

const tracer = () => trace.getTracer('test');

/** The spans the bodies saw active, by call id. */
const activeIn = new Map<string, Span | undefined>();
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up',
  input: z.object({ word: z.string() }),
  mode: 'parallel',
  execute: async ({ word }, ctx) => {
    activeIn.set(ctx.callId, trace.getActiveSpan());
    await new Promise((resolve) => setTimeout(resolve, 5));
    // A span the body starts after an await: a child of the call's span.
    tracer().startActiveSpan('db query', (inner) => inner.end());
    return `${word}: found`;
  },
});
const broken = defineTool({ name: 'broken', description: 'Always fails', input: z.object({}), mode: 'parallel', execute: () => Promise.reject(new Error('disk on fire')) });

const calls: ToolCall[] = [
  { id: 'c1', name: 'lookup', args: { word: 'otter' } },
  { id: 'c2', name: 'broken', args: {} },
  { id: 'c3', name: 'nowhere', args: {} },
  { id: 'c4', name: 'lookup', args: { word: 'secret' } },
];

describe('toolTracing: a span per call by the GenAI conventions', () => {
  it('names, kind, attributes and status: ok, failed, refused at intake and denied calls all have their span', async () => {
    const pipeline = createPipeline({
      tools: [lookup, broken],
      pre: [(ctx, next) => ((ctx.args as { word?: string }).word === 'secret' ? { decision: 'deny', reason: 'no secrets' } : next())],
      observers: [toolTracing()],
    });
    const results = await pipeline.run(calls);
    expect(results.map((r) => r.status)).toEqual(['ok', 'error', 'error', 'denied']);
    const spans = exporter.getFinishedSpans().filter((span) => span.name.startsWith('execute_tool'));
    expect(spans.map((span) => span.name).sort()).toEqual(['execute_tool broken', 'execute_tool lookup', 'execute_tool lookup', 'execute_tool nowhere']);
    for (const span of spans) expect(span.kind).toBe(SpanKind.INTERNAL);

    const ok = spanOfCall(spans, 'c1');
    expect(ok.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'c1',
      'gen_ai.tool.description': 'Look a word up',
      'gen_ai.tool.type': 'function',
      'toolstream.status': 'ok',
      'toolstream.decision': 'allow',
      'toolstream.attempts': 1,
      'toolstream.started': true,
      'toolstream.call.index': 0,
    });
    expect(ok.attributes['toolstream.duration.execute_ms']).toBeGreaterThan(0);
    expect(ok.attributes['error.type']).toBeUndefined();
    expect(ok.status.code).toBe(SpanStatusCode.UNSET);

    const failed = spanOfCall(spans, 'c2');
    expect(failed.attributes).toMatchObject({ 'error.type': 'tool_error', 'toolstream.status': 'error' });
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Tool "broken" failed: disk on fire' });

    const unknown = spanOfCall(spans, 'c3');
    expect(unknown.attributes).toMatchObject({ 'gen_ai.tool.name': 'nowhere', 'error.type': 'unknown_tool', 'toolstream.started': false });
    expect(unknown.attributes['gen_ai.tool.description']).toBeUndefined();
    expect(unknown.status.code).toBe(SpanStatusCode.ERROR);

    const denied = spanOfCall(spans, 'c4');
    expect(denied.attributes).toMatchObject({ 'error.type': 'denied', 'toolstream.decision': 'deny', 'toolstream.started': false });
    expect(denied.status.code).toBe(SpanStatusCode.ERROR);
  });

  it("the caller's active span is every call's parent; the body runs inside its call's span, and the spans it starts are the call's children", async () => {
    activeIn.clear();
    // One at a time: each later call starts in the continuation of the body before it.
    const pipeline = createPipeline({ tools: [lookup], concurrency: 1, observers: [toolTracing()] });
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const step = await tracer().startActiveSpan('agent step', async (span) => {
      await pipeline.run(ids.map((id) => ({ id, name: 'lookup', args: { word: id } })));
      span.end();
      return span;
    });
    const spans = exporter.getFinishedSpans();
    for (const id of ids) {
      const span = spanOfCall(spans, id);
      expect(span.spanContext().traceId, id).toBe(step.spanContext().traceId);
      expect(span.parentSpanContext?.spanId, id).toBe(step.spanContext().spanId);
      expect(activeIn.get(id)?.spanContext().spanId, `${id}: the body's active span`).toBe(span.spanContext().spanId);
    }
    const inner = spans.filter((span) => span.name === 'db query');
    expect(inner).toHaveLength(ids.length);
    const callSpanIds = new Set(ids.map((id) => spanOfCall(spans, id).spanContext().spanId));
    expect(new Set(inner.map((span) => span.parentSpanContext?.spanId))).toEqual(callSpanIds);
  });

  it("a call pushed from a result's callback (where the engine left a body's context active) takes the run's caller span, not its sibling's", async () => {
    const pipeline = createPipeline({ tools: [lookup], observers: [toolTracing()] });
    const ids = ['p1', 'p2', 'p3'];
    const step = await tracer().startActiveSpan('agent step', async (span) => {
      const calls = new Subject<ToolCall>();
      const done = new Promise<void>((resolve) => {
        let next = 1;
        // Each result brings the next call, as an agent loop over operator() does.
        calls.pipe(pipeline.operator()).subscribe({
          next: () => (next < ids.length ? calls.next({ id: ids[next++]!, name: 'lookup', args: { word: 'w' } }) : calls.complete()),
          complete: resolve,
        });
      });
      calls.next({ id: ids[0]!, name: 'lookup', args: { word: 'w' } });
      await done;
      span.end();
      return span;
    });
    const spans = exporter.getFinishedSpans();
    for (const id of ids) expect(spanOfCall(spans, id).parentSpanContext?.spanId, id).toBe(step.spanContext().spanId);
  });

  it('records neither arguments nor results unless asked; with recordArguments and recordResults, both', async () => {
    const call = { id: 'x', name: 'lookup', args: { word: 'private' } };
    await createPipeline({ tools: [lookup], observers: [toolTracing()] }).run([call]);
    const quiet = spanOfCall(exporter.getFinishedSpans(), 'x');
    expect(Object.keys(quiet.attributes).filter((key) => key.startsWith('gen_ai.tool.call.') && key !== 'gen_ai.tool.call.id')).toEqual([]);
    expect(JSON.stringify(quiet.attributes)).not.toContain('private');
    exporter.reset();
    await createPipeline({ tools: [lookup], observers: [toolTracing({ recordArguments: true, recordResults: true })] }).run([call]);
    const told = spanOfCall(exporter.getFinishedSpans(), 'x');
    expect(told.attributes['gen_ai.tool.call.arguments']).toBe('{"word":"private"}');
    expect(told.attributes['gen_ai.tool.call.result']).toBe('private: found');
  });

  it('each subscription of one operator has spans of its own, and a durable turn is traced too', async () => {
    const pipeline = createPipeline({ tools: [lookup], observers: [toolTracing({ tracer: tracer() })], journal: memoryJournal(), approvalSecret: 'a secret of thirty-two bytes or more!' });
    const operator = pipeline.operator();
    const source = from([{ id: 'o1', name: 'lookup', args: { word: 'one' } }]);
    const [first, second] = await Promise.all([lastValueFrom(source.pipe(operator, toArray())), lastValueFrom(source.pipe(operator, toArray()))]);
    expect([first!.length, second!.length]).toEqual([1, 1]);
    expect(exporter.getFinishedSpans().filter((span) => span.attributes['gen_ai.tool.call.id'] === 'o1')).toHaveLength(2);
    exporter.reset();
    await pipeline.run([{ id: 'd1', name: 'lookup', args: { word: 'kept' } }], { turn: 'turn-1' });
    expect(spanOfCall(exporter.getFinishedSpans(), 'd1').attributes).toMatchObject({ 'toolstream.status': 'ok', 'toolstream.turn': 'turn-1' });
  });

  it('a suspended call (waiting for a human) is not an error: its span says why it paused', async () => {
    const pipeline = createPipeline({
      tools: [lookup],
      pre: [() => ({ decision: 'ask', reason: 'a human looks first' })],
      approve: () => 'suspend',
      observers: [toolTracing()],
      journal: memoryJournal(),
      approvalSecret: 'a secret of thirty-two bytes or more!',
    });
    const [result] = await pipeline.run([{ id: 's1', name: 'lookup', args: { word: 'later' } }], { turn: 'turn-s' });
    expect(result!.status).toBe('suspended');
    const span = spanOfCall(exporter.getFinishedSpans(), 's1');
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes).toMatchObject({ 'toolstream.status': 'suspended', 'toolstream.suspended': 'approval_pending', 'toolstream.decision': 'ask' });
    expect(span.attributes['error.type']).toBeUndefined();
  });

  it('a run unsubscribed with calls in flight or queued ends their spans as cancelled, and a result that comes later adds nothing', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const aborted: string[] = [];
    const slow = defineTool({
      name: 'slow',
      description: 'Waits to be released',
      input: z.object({}),
      mode: 'parallel',
      execute: async (_args, ctx) => {
        ctx.signal.addEventListener('abort', () => aborted.push(ctx.callId));
        await held;
        return 'late';
      },
    });
    const pipeline = createPipeline({ tools: [slow, lookup], concurrency: 1, observers: [toolTracing()] });
    const calls = new Subject<ToolCall>();
    const results: string[] = [];
    const subscription = calls.pipe(pipeline.operator()).subscribe((result) => results.push(result.id));
    calls.next({ id: 'u1', name: 'lookup', args: { word: 'done' } });
    await vi.waitFor(() => expect(results).toEqual(['u1']));
    calls.next({ id: 'u2', name: 'slow', args: {} }); // running
    calls.next({ id: 'u3', name: 'slow', args: {} }); // queued behind it (one slot)
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(exporter.getFinishedSpans().map((span) => span.attributes['gen_ai.tool.call.id'])).not.toContain('u2');

    subscription.unsubscribe();
    expect(aborted).toEqual(['u2']);
    for (const id of ['u2', 'u3']) {
      const span = spanOfCall(exporter.getFinishedSpans(), id);
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the run was unsubscribed before the call had its result' });
      expect(span.attributes).toMatchObject({ 'toolstream.status': 'cancelled', 'error.type': 'cancelled', 'toolstream.unsubscribed': true });
    }
    expect(spanOfCall(exporter.getFinishedSpans(), 'u1').attributes['toolstream.status']).toBe('ok');

    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(exporter.getFinishedSpans().filter((span) => span.name === 'execute_tool slow')).toHaveLength(2);
  });

  it('refuses malformed options, naming them', () => {
    expect(() => toolTracing({ recordArguments: 'yes' as unknown as boolean })).toThrow(/toolTracing: `recordArguments` must be a boolean/);
    expect(() => toolTracing({ tracer: {} as never })).toThrow(/`tracer` must be an OpenTelemetry Tracer/);
  });
});
