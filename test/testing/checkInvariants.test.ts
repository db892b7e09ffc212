import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, denyTools, type PipelineEvent, type PrePolicy, type ToolCall, type ToolResult } from '../../src/index.js';
import { checkInvariants, invariantMonitor, TestingOptionError, type InvariantReport, type MonitorEntry } from '../../src/testing/index.js';
import { BodyMonitor, callSpecs, gateApprover, gatePolicy, monitoredTools, NEVER_MS, schedulerTimers } from '../support/monitor.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

const codes = (report: InvariantReport) => (report.ok ? [] : report.violations.map((v) => v.code));

const read = defineTool({ name: 'read', description: 'read', input: z.object({}), mode: 'parallel', execute: () => 'read' });
const write = defineTool({ name: 'write', description: 'write', input: z.object({}), mode: 'exclusive', execute: () => 'written' });
const tools = [read, write];
const calls: ToolCall[] = [
  { id: 'a', name: 'read', args: {} },
  { id: 'b', name: 'read', args: {} },
  { id: 'c', name: 'write', args: {} },
];

/** A real run of `calls`, with its events and its monitor's log. */
async function realRun(pre: PrePolicy[] = []) {
  const monitor = invariantMonitor();
  const events: PipelineEvent[] = [];
  const pipeline = createPipeline({ tools, execute: [monitor.execute], observers: [{ event: (e) => events.push(e) }], pre });
  const results = await pipeline.run(calls);
  return { calls, results, events, log: monitor.log, tools, concurrency: 10 };
}

const entry = (type: 'start' | 'end', index: number, exclusive = false): MonitorEntry => ({ type, index, id: calls[index]?.id ?? `x${index}`, name: exclusive ? 'write' : 'read', exclusive });
/** A result as it would be with `timing` running from `startedAt` to `endedAt`. */
const timed = (result: ToolResult, startedAt: number, endedAt: number): ToolResult => ({ ...result, timing: { ...result.timing, startedAt, endedAt } }) as ToolResult;

describe('checkInvariants fails hand-made broken runs', () => {
  it('passes the real run they are made from', async () => {
    const run = await realRun();
    expect(run.results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok']);
    expect(checkInvariants(run)).toEqual({ ok: true });
    expect(checkInvariants({ ...run, log: undefined, events: undefined })).toEqual({ ok: true });
  });

  it('a duplicate result, a reordered result, a missing one, one with another id, one for no call', async () => {
    const run = await realRun();
    const [a, b, c] = run.results as [ToolResult, ToolResult, ToolResult];
    expect(codes(checkInvariants({ ...run, results: [a, a, b, c] }))).toEqual(['duplicate_result']);
    expect(codes(checkInvariants({ ...run, results: [a, c, b] }))).toEqual(['out_of_order']);
    expect(codes(checkInvariants({ ...run, results: [a, b] }))).toEqual(['missing_result']);
    expect(codes(checkInvariants({ ...run, results: [a, { ...b, id: 'z' } as ToolResult, c] }))).toEqual(['id_mismatch']);
    expect(codes(checkInvariants({ ...run, results: [a, b, c, { ...c, index: 3 } as ToolResult] }))).toEqual(['unexpected_result']);
    const report = checkInvariants({ ...run, results: [a, c, b] });
    expect(report.ok === false && report.violations[0]).toEqual({
      code: 'out_of_order',
      index: 1,
      position: 2,
      after: 2,
      message: 'the result of call #1 came at position 2, after the result of call #2: not in model order',
    });
  });

  it('too many bodies at once: by the log, and by the results’ timing', async () => {
    const run = await realRun();
    const log = [entry('start', 0), entry('start', 1), entry('end', 0), entry('end', 1)];
    expect(codes(checkInvariants({ ...run, log, concurrency: 1 }))).toEqual(['concurrency_exceeded']);
    expect(codes(checkInvariants({ ...run, log, concurrency: 2 }))).toEqual([]);
    const [a, b, c] = run.results as [ToolResult, ToolResult, ToolResult];
    const overlapping = [timed(a, 0, 10), timed(b, 5, 15), timed(c, 20, 30)];
    expect(codes(checkInvariants({ ...run, log: undefined, results: overlapping, concurrency: 1 }))).toEqual(['concurrency_exceeded']);
    // Half-open: one ending as the next starts did not overlap it.
    const touching = [timed(a, 0, 10), timed(b, 10, 15), timed(c, 20, 30)];
    expect(codes(checkInvariants({ ...run, log: undefined, results: touching, concurrency: 1 }))).toEqual([]);
  });

  it('an exclusive body beside another: starting beside one, or one starting beside it', async () => {
    const run = await realRun();
    expect(codes(checkInvariants({ ...run, log: [entry('start', 0), entry('start', 2, true), entry('end', 2, true), entry('end', 0)] }))).toEqual(['exclusive_overlap']);
    const report = checkInvariants({ ...run, log: [entry('start', 2, true), entry('start', 1), entry('end', 1), entry('end', 2, true)] });
    expect(report.ok === false && report.violations.map((v) => [v.code, v.index, 'overlapping' in v ? v.overlapping : []])).toEqual([['exclusive_overlap', 2, [1]]]);
    const [a, b, c] = run.results as [ToolResult, ToolResult, ToolResult];
    expect(codes(checkInvariants({ ...run, log: undefined, results: [timed(a, 0, 10), timed(b, 0, 10), timed(c, 9, 20)] }))).toEqual(['exclusive_overlap']);
  });

  it('a denied call started: by the log, by its result, by its events', async () => {
    const run = await realRun([denyTools(['write'])]);
    expect(run.results.map((r) => r.status)).toEqual(['ok', 'ok', 'denied']);
    expect(checkInvariants(run)).toEqual({ ok: true });
    const log = [...run.log, entry('start', 2, true), entry('end', 2, true)];
    expect(codes(checkInvariants({ ...run, log }))).toEqual(['not_admitted']);
    const [a, b, c] = run.results as [ToolResult, ToolResult, ToolResult];
    const started = { ...c, started: true, timing: { ...c.timing, startedAt: 1, endedAt: 2 } } as ToolResult;
    expect(codes(checkInvariants({ ...run, log: undefined, events: undefined, results: [a, b, started] }))).toEqual(['not_admitted']);
    const startedEvent: PipelineEvent = { type: 'started', index: 2, id: 'c', name: 'write', turn: undefined, at: 0 };
    expect(codes(checkInvariants({ ...run, events: [...run.events, startedEvent] }))).toEqual(['not_admitted']);
  });

  it('a call cancelled before it started, started: by the log, and by its events', async () => {
    const run = await realRun();
    const [a, b, c] = run.results as [ToolResult, ToolResult, ToolResult];
    const cancelled = { ...c, status: 'cancelled', started: false, error: { code: 'cancelled', message: 'cancelled', reason: 'sibling_failed' } } as unknown as ToolResult;
    const results = [a, b, cancelled];
    expect(codes(checkInvariants({ ...run, results, events: undefined }))).toEqual(['started_after_cancel']);
    const events = run.events.map((e): PipelineEvent => (e.index === 2 && e.type === 'finished' ? { ...e, status: 'cancelled', result: cancelled } : e));
    const startedLast = [...events.filter((e) => !(e.index === 2 && e.type === 'started')), { type: 'started', index: 2, id: 'c', name: 'write', turn: undefined, at: 0 } as PipelineEvent];
    expect(codes(checkInvariants({ ...run, log: undefined, results: [a, b, { ...cancelled, started: true } as ToolResult], events: startedLast }))).toContain('started_after_cancel');
  });

  it('a body whose result says it never started', async () => {
    const run = await realRun();
    const [a, b, c] = run.results as [ToolResult, ToolResult, ToolResult];
    const refused = { ...c, status: 'denied', started: false, error: { code: 'denied', message: 'start check', policy: 'p', reasons: [], stage: 'start' } } as unknown as ToolResult;
    expect(codes(checkInvariants({ ...run, results: [a, b, refused], events: undefined }))).toEqual(['start_not_reported']);
  });

  it('refuses input it cannot read', async () => {
    const run = await realRun();
    const refusal = (input: unknown) => {
      try {
        checkInvariants(input as never);
        return 'accepted';
      } catch (error) {
        return error instanceof TestingOptionError ? error.option : error;
      }
    };
    expect(refusal({ ...run, concurrency: 0 })).toBe('concurrency');
    expect(refusal({ ...run, concurrency: 1.5 })).toBe('concurrency');
    expect(refusal({ ...run, results: undefined })).toBe('results');
    expect(refusal({ ...run, log: {} })).toBe('log');
    expect(refusal({ ...run, concurrency: Infinity })).toBe('accepted');
  });
});

describe('checkInvariants on real runs', () => {
  it('the monitor hands every outcome on unchanged', async () => {
    let attempts = 0;
    const flaky = defineTool({
      name: 'flaky',
      description: 'fails once',
      input: z.object({}),
      mode: 'parallel',
      idempotent: true,
      retry: { attempts: 2, backoff: { initialMs: 1 } },
      execute: () => {
        if (attempts++ % 2 === 0) throw new Error('first attempt');
        return 'second';
      },
    });
    const stream = defineTool({ name: 'stream', description: 's', input: z.object({}), mode: 'parallel', execute: async function* () { yield 1; yield 2; } });
    const fails = defineTool({ name: 'fails', description: 'f', input: z.object({}), mode: 'parallel', execute: async () => { throw new Error('no'); } });
    const batch = [
      { id: '1', name: 'flaky', args: {} },
      { id: '2', name: 'stream', args: {} },
      { id: '3', name: 'fails', args: {} },
    ];
    const outline = (results: readonly ToolResult[]) => results.map((r) => [r.status, r.value, r.error?.code, r.attempts, r.status === 'ok' && r.streamed]);
    const plain = await createPipeline({ tools: [flaky, stream, fails] }).run(batch);
    const monitor = invariantMonitor();
    const watched = await createPipeline({ tools: [flaky, stream, fails], execute: [monitor.execute] }).run(batch);
    expect(outline(watched)).toEqual(outline(plain));
    expect(outline(watched)).toEqual([['ok', 'second', undefined, 2, false], ['ok', [1, 2], undefined, 1, true], ['error', undefined, 'tool_error', 1, false]]);
    expect(monitor.log.filter((e) => e.type === 'start').map((e) => e.index)).toEqual([0, 1, 2, 0]);
    expect(checkInvariants({ calls: batch, results: watched, log: monitor.log, tools: [flaky, stream, fails], concurrency: 10 })).toEqual({ ok: true });
  });

  it('random latencies, failures, modes, gates and approvals: the log, the events and the timing all pass, and a lower concurrency is caught', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), callSpecs, fc.integer({ min: 1, max: 4 }), fc.constantFrom('cancel-rest' as const, 'continue' as const), async (s, specs, concurrency, onError) => {
        const monitor = invariantMonitor();
        const events: PipelineEvent[] = [];
        const tools = monitoredTools(s, new BodyMonitor());
        const pipeline = createPipeline({
          tools,
          concurrency,
          onError,
          execute: [monitor.execute],
          observers: [{ event: (e) => events.push(e) }],
          pre: [gatePolicy(s)],
          approve: gateApprover(s, []),
          scheduler: schedulerTimers(s),
          abortGraceMs: Infinity,
          defaultTimeoutMs: Infinity,
          approvalTimeoutMs: Infinity,
          policyTimeoutMs: NEVER_MS,
        });
        const calls = specs.map((spec, i): ToolCall => ({ id: `c${i}`, name: spec.name, args: { key: `k${i}`, steps: spec.steps, outcome: spec.outcome, gate: spec.gate } }));
        const source = new Subject<ToolCall>();
        const results: ToolResult[] = [];
        const done = new Promise<void>((resolve, reject) => source.pipe(pipeline.operator()).subscribe({ next: (r) => results.push(r), error: reject, complete: resolve }));
        void (async () => {
          for (const [i, call] of calls.entries()) {
            if (!specs[i]!.burst) await s.schedule(Promise.resolve(), `arrival ${i}`);
            source.next(call);
          }
          await s.schedule(Promise.resolve(), 'source completes');
          source.complete();
        })();
        await s.waitFor(done);
        await s.waitAll();

        const run = { calls, results, events, log: monitor.log, tools, concurrency };
        expect(checkInvariants(run)).toEqual({ ok: true });
        expect(checkInvariants({ ...run, log: undefined })).toEqual({ ok: true });
        expect(checkInvariants({ ...run, log: undefined, events: undefined })).toEqual({ ok: true });
        // The most bodies that ran at once, counted here from the log: claiming less is caught.
        let running = 0;
        let most = 0;
        for (const e of monitor.log) most = Math.max(most, (running += e.type === 'start' ? 1 : -1));
        if (most > 1) expect(codes(checkInvariants({ ...run, concurrency: most - 1 }))).toContain('concurrency_exceeded');
      }),
      { numRuns: Math.max(50, NUM_RUNS / 4) },
    );
  });
});
