import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, otelSpans, type ToolResult } from '../src/index.js';
import { capturingWarnings } from './support/warnings.js';

const ok = defineTool({ name: 'ok', description: 'ok', input: z.object({}), mode: 'parallel', execute: async () => 'fine' });
const bad = defineTool({ name: 'bad', description: 'bad', input: z.object({}), mode: 'parallel', onError: 'continue', execute: () => Promise.reject(new Error('nope')) });

describe('observers', () => {
  it('are told about every result, each once', async () => {
    const seen: ToolResult[] = [];
    const results = await createPipeline({ tools: [ok, bad], observers: [(r) => seen.push(r)] }).run([
      { id: 'a', name: 'ok', args: {} },
      { id: 'b', name: 'bad', args: {} },
      { id: 'c', name: 'missing', args: {} },
    ]);
    expect(seen.map((r) => r.id).sort()).toEqual(['a', 'b', 'c']);
    expect(new Set(seen)).toEqual(new Set(results)); // the same frozen objects
  });

  it('an observer that throws disturbs nothing; its error goes to onObserverError with the result', async () => {
    const reported = vi.fn();
    const results = await createPipeline({
      tools: [ok],
      observers: [
        () => {
          throw new Error('metrics backend down');
        },
      ],
      onObserverError: reported,
    }).run([{ id: 'a', name: 'ok', args: {} }]);
    expect(results[0]!.status).toBe('ok');
    expect(reported).toHaveBeenCalledWith(expect.objectContaining({ message: 'metrics backend down' }), results[0]);
  });

  it('otelSpans over a tracer whose startSpan throws loses no result and crashes nothing (default: a process warning)', async () => {
    const broken = { startSpan: () => { throw new Error('exporter down'); } };
    // Taken, not printed: a green run prints no warning.
    const { value: results, warnings } = await capturingWarnings(() =>
      createPipeline({ tools: [ok], observers: [otelSpans(broken)] }).run([
        { id: 'a', name: 'ok', args: {} },
        { id: 'b', name: 'ok', args: {} },
      ]),
    );
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok']);
    expect(warnings.map((w) => [w.name, w.code])).toEqual([
      ['ToolstreamObserverWarning', 'TOOLSTREAM_OBSERVER_ERROR'],
      ['ToolstreamObserverWarning', 'TOOLSTREAM_OBSERVER_ERROR'],
    ]);
    expect(warnings[0]!.message).toMatch(/call "a" \(ok\): exporter down/);
  });

  it('an onObserverError that throws itself is swallowed: the stream goes on', async () => {
    const results = await createPipeline({
      tools: [ok],
      observers: [() => { throw new Error('observer'); }],
      onObserverError: () => { throw new Error('handler'); },
    }).run([{ id: 'a', name: 'ok', args: {} }, { id: 'b', name: 'ok', args: {} }]);
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok']);
  });

  it('otelSpans records one span per call with the outcome, timings and an error status for failures', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('toolstream-test');
    await createPipeline({ tools: [ok, bad], observers: [otelSpans(tracer)] }).run([
      { id: 'a', name: 'ok', args: {} },
      { id: 'b', name: 'bad', args: {} },
    ]);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name).sort()).toEqual(['tool bad', 'tool ok']);
    const failed = spans.find((s) => s.name === 'tool bad')!;
    expect(failed.attributes).toMatchObject({ 'tool.name': 'bad', 'tool.call_id': 'b', 'tool.status': 'error', 'tool.error.code': 'tool_error', 'tool.decision': 'allow' });
    expect(failed.status).toMatchObject({ code: 2, message: 'Tool "bad" failed: nope' });
    const fine = spans.find((s) => s.name === 'tool ok')!;
    expect(fine.status.code).toBe(0);
    expect(typeof fine.attributes['tool.duration.execute_ms']).toBe('number');
    // the span covers the call: it starts at receipt and ends when the result was built
    const toMs = ([s, ns]: [number, number]) => s * 1e3 + ns / 1e6;
    expect(toMs(fine.endTime)).toBeGreaterThanOrEqual(toMs(fine.startTime));
    expect(Math.abs(toMs(fine.startTime) - Date.now())).toBeLessThan(10_000);
  });

  it('observers and onObserverError are validated', () => {
    expect(() => createPipeline({ tools: [ok], observers: [42 as never] })).toThrow(/`observers` must be an array of result observers/);
    expect(() => createPipeline({ tools: [ok], onObserverError: 'log' as never })).toThrow(/`onObserverError` must be a function/);
  });
});
