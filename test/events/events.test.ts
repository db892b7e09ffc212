import { ignoreElements, lastValueFrom, of, tap, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, memoryJournal, SourceError, type PipelineEvent, type ToolCall, type ToolResult } from '../../src/index.js';
import { CallRecord } from '../../src/engine/records/callRecord.js';
import { runWithEvents } from '../../src/observe/eventLayer.js';
import { capturingWarnings } from '../support/warnings.js';

const input = z.object({ n: z.number() });
const echo = defineTool({ name: 'echo', description: 'echo', input, mode: 'parallel', execute: async ({ n }) => n });
const write = defineTool({ name: 'write', description: 'write', input, mode: 'exclusive', execute: async ({ n }) => `wrote ${n}` });
const steps = defineTool({
  name: 'steps', description: 'reports progress', input, mode: 'parallel',
  execute: async ({ n }, ctx) => {
    for (let i = 1; i <= n; i++) {
      ctx.progress({ step: i, of: n });
      await Promise.resolve();
    }
    return 'done';
  },
});

const all = (pipeline: ReturnType<typeof createPipeline>, calls: ToolCall[], options = {}) => lastValueFrom(pipeline.events(calls, options).pipe(toArray()));
const of1 = (events: PipelineEvent[], index: number) => events.filter((e) => e.index === index).map((e) => e.type);

describe('pipeline.events()', () => {
  it('tells each call received, decided, started, finished, then its result in model order', async () => {
    const events = await all(createPipeline({ tools: [echo] }), [
      { id: 'a', name: 'echo', args: { n: 1 }, turn: 't1' },
      { id: 'b', name: 'missing', args: {} },
    ]);
    expect(of1(events, 0)).toEqual(['received', 'decided', 'started', 'finished', 'result']);
    expect(of1(events, 1)).toEqual(['received', 'finished', 'result']); // failed at intake: never decided or started
    const received = events.find((e) => e.type === 'received' && e.index === 1);
    expect(received).toMatchObject({ id: 'b', name: 'missing', done: true, turn: undefined });
    expect(events.find((e) => e.type === 'started')).toMatchObject({ id: 'a', name: 'echo', turn: 't1' });
    const at = events.map((e) => e.at);
    expect(at).toEqual([...at].sort((x, y) => x - y)); // emitted as it happened
    const decided = events.find((e) => e.type === 'decided');
    expect(decided).toMatchObject({ decision: 'allow', decidedBy: '(default)', reasons: [] });
    expect(events.filter((e) => e.type === 'result').map((e) => e.type === 'result' && e.result.status)).toEqual(['ok', 'error']);
  });

  it('finished is in completion order, result in model order; results equal what run resolves to', async () => {
    const slow = defineTool({ name: 'slow', description: 'slow', input, mode: 'parallel', execute: ({ n }) => new Promise((r) => setTimeout(() => r(n), 30)) });
    const pipeline = createPipeline({ tools: [slow, echo] });
    const calls = [{ id: 's', name: 'slow', args: { n: 1 } }, { id: 'e', name: 'echo', args: { n: 2 } }];
    const events = await all(pipeline, calls);
    expect(events.filter((e) => e.type === 'finished').map((e) => e.id)).toEqual(['e', 's']);
    const results = events.flatMap((e) => (e.type === 'result' ? [e.result] : []));
    expect(results.map((r) => r.id)).toEqual(['s', 'e']);
    const ran = await pipeline.run(calls);
    const strip = (r: ToolResult) => ({ ...r, timing: undefined });
    expect(results.map(strip)).toEqual(ran.map(strip));
    // finished and result carry the same frozen result
    expect(events.find((e) => e.type === 'finished' && e.id === 's')).toMatchObject({ result: results[0], status: 'ok' });
  });

  it('an approval is requested and answered; a denied call never starts', async () => {
    let asked = 0;
    const pipeline = createPipeline({
      tools: [write],
      pre: [(ctx, next) => (ctx.call.name === 'write' ? { decision: 'ask', reason: 'writes' } : next())],
      approve: async () => (asked++ === 0 ? 'allowed-once' : 'rejected'),
    });
    const events = await all(pipeline, [{ id: 'a', name: 'write', args: { n: 1 } }, { id: 'b', name: 'write', args: { n: 2 } }]);
    expect(of1(events, 0)).toEqual(['received', 'decided', 'approval-requested', 'approval-answered', 'started', 'finished', 'result']);
    expect(of1(events, 1)).toEqual(['received', 'decided', 'approval-requested', 'approval-answered', 'finished', 'result']);
    expect(events.find((e) => e.type === 'approval-requested')).toMatchObject({ reasons: ['writes'] });
    const answers = events.flatMap((e) => (e.type === 'approval-answered' ? [[e.id, e.approved, e.answer]] : []));
    expect(answers).toEqual([['a', true, 'allowed-once'], ['b', false, 'approval_rejected']]);
  });

  it('ctx.progress reaches the stream as progress events between started and finished', async () => {
    const events = await all(createPipeline({ tools: [steps] }), [{ id: 'p', name: 'steps', args: { n: 3 } }]);
    expect(of1(events, 0)).toEqual(['received', 'decided', 'started', 'progress', 'progress', 'progress', 'finished', 'result']);
    const progress = events.flatMap((e) => (e.type === 'progress' ? [[e.value, e.sequence, e.truncated]] : []));
    expect(progress).toEqual([[{ step: 1, of: 3 }, 1, false], [{ step: 2, of: 3 }, 2, false], [{ step: 3, of: 3 }, 3, false]]);
  });

  it('progress is a JSON copy, cut over maxChars, dropped past maxEvents, and a non-JSON value becomes a note', async () => {
    const reporter = defineTool({
      name: 'reporter', description: 'r', input, mode: 'parallel',
      execute: async (_, ctx) => {
        const mutable = { n: 1 };
        ctx.progress(mutable);
        mutable.n = 2; // after reporting: the event keeps 1
        ctx.progress('x'.repeat(500));
        ctx.progress(10n as never);
        ctx.progress(4); // the fourth: over maxEvents
        return 'ok';
      },
    });
    const events = await all(createPipeline({ tools: [reporter], progress: { maxChars: 100, maxEvents: 3 } }), [{ id: 'r', name: 'reporter', args: { n: 0 } }]);
    const progress = events.flatMap((e) => (e.type === 'progress' ? [e] : []));
    expect(progress).toHaveLength(3);
    expect(progress[0]).toMatchObject({ value: { n: 1 }, truncated: false });
    expect(progress[1]!.truncated).toBe(true);
    expect(progress[1]!.value).toMatch(/^"x{99}\n\[\.\.\. 402 characters omitted\]$/);
    expect(progress[2]).toMatchObject({ truncated: true });
    expect(progress[2]!.value).toMatch(/progress value not JSON: .*BigInt/);
  });

  it('ctx.progress is a no-op in run() and after the call is decided (a body ignoring its timeout)', async () => {
    let late: (() => void) | undefined;
    const stubborn = defineTool({
      name: 'stubborn', description: 's', input, mode: 'parallel', timeoutMs: 10,
      execute: (_, ctx) => new Promise((resolve) => { late = () => { ctx.progress('late'); resolve('x'); }; }),
    });
    expect((await createPipeline({ tools: [steps] }).run([{ id: 'p', name: 'steps', args: { n: 2 } }]))[0]!.status).toBe('ok');
    const events = await all(createPipeline({ tools: [stubborn], abortGraceMs: 0 }), [{ id: 's', name: 'stubborn', args: { n: 0 } }]);
    late!();
    await new Promise((r) => setTimeout(r, 5));
    expect(events.some((e) => e.type === 'progress')).toBe(false);
    expect(events.find((e) => e.type === 'result')).toMatchObject({ result: { status: 'error', error: { code: 'timeout' } } });
  });

  it('errors with a SourceError holding the results so far when the source fails, like run', async () => {
    async function* source(): AsyncIterable<ToolCall> {
      yield { id: 'a', name: 'echo', args: { n: 1 } };
      throw new Error('stream broke');
    }
    const seen: PipelineEvent[] = [];
    const error = await new Promise<unknown>((resolve) => createPipeline({ tools: [echo] }).events(source()).subscribe({ next: (e) => seen.push(e), error: resolve }));
    expect(error).toBeInstanceOf(SourceError);
    expect((error as SourceError).results.map((r) => r.id)).toEqual(['a']);
    expect(seen.filter((e) => e.type === 'result')).toHaveLength(1);
  });

  it('a durable turn: the same events, and the stream completes after the lease is given up', async () => {
    const journal = memoryJournal();
    const pipeline = createPipeline({ tools: [echo], journal, approvalSecret: 'x'.repeat(32) });
    const events = await all(pipeline, [{ id: 'a', name: 'echo', args: { n: 1 } }], { turn: 'conv/1' });
    expect(of1(events, 0)).toEqual(['received', 'decided', 'started', 'finished', 'result']);
    expect(events[0]).toMatchObject({ turn: 'conv/1' });
    const resumed = await pipeline.resume('conv/1'); // the lease is free: resuming replays the journaled result
    expect(resumed.map((r) => r.value)).toEqual([1]);
  });

  it('rejects a bad source, signal or turn at once, as run does', () => {
    const pipeline = createPipeline({ tools: [echo] });
    expect(() => pipeline.events(42 as never)).toThrow(/`calls` must be an array/);
    expect(() => pipeline.events([], { signal: 'x' as never })).toThrow(/`signal` must be an AbortSignal/);
    expect(() => pipeline.events([], { turn: 'x' })).toThrow(/journal/);
  });
});

describe('event observers', () => {
  it('an observer object sees every event of run(); result observers still see results; a throw is a warning only', async () => {
    const seen: PipelineEvent[] = [];
    const results: ToolResult[] = [];
    const pipeline = createPipeline({
      tools: [steps],
      observers: [(r) => results.push(r), { event: (e) => seen.push(e) }, { event: () => { throw new Error('ui gone'); } }],
    });
    // Taken, not printed: a green run prints no warning.
    const { value: ran, warnings } = await capturingWarnings(async () => {
      const answered = await pipeline.run([{ id: 'p', name: 'steps', args: { n: 2 } }]);
      await new Promise((r) => setImmediate(r)); // the last events reach the observers
      return answered;
    });
    expect(seen.map((e) => e.type)).toEqual(['received', 'decided', 'started', 'progress', 'progress', 'finished', 'result']);
    expect(results).toEqual(ran);
    expect(seen.at(-1)).toMatchObject({ type: 'result', result: ran[0] });
    expect(warnings.map((w) => w.message)).toEqual(seen.map((e) => `an event observer failed on the ${e.type} event of call "p" (steps): ui gone`));
    expect(new Set(warnings.map((w) => w.name))).toEqual(new Set(['ToolstreamObserverWarning']));
  });

  it('the operator form reports to event observers too, and events() to both subscriber and observers', async () => {
    const seen: string[] = [];
    const pipeline = createPipeline({ tools: [echo], observers: [{ event: (e) => seen.push(e.type) }] });
    const results = await lastValueFrom(of<ToolCall>({ id: 'a', name: 'echo', args: { n: 5 } }).pipe(pipeline.operator(), toArray()));
    expect(results.map((r) => r.value)).toEqual([5]);
    expect(seen).toEqual(['received', 'decided', 'started', 'finished', 'result']);
    seen.length = 0;
    const subscribed = await all(pipeline, [{ id: 'a', name: 'echo', args: { n: 5 } }]);
    expect(subscribed.map((e) => e.type)).toEqual(seen);
  });

  it('validates observers and the progress budget eagerly', () => {
    expect(() => createPipeline({ tools: [echo], observers: [{ event: 1 } as never] })).toThrow(/`observers` must be/);
    expect(() => createPipeline({ tools: [echo], progress: { maxChars: 0 } })).toThrow(/`progress.maxChars` must be a positive integer/);
    expect(() => createPipeline({ tools: [echo], progress: { maxEvents: -1 } })).toThrow(/`progress.maxEvents` must be a non-negative integer/);
  });
});

describe('the retry hook', () => {
  it('the events layer turns the retry hook into a retry event', async () => {
    const record = new CallRecord(0, 'r', 'fetch', {}, 0);
    const events = await lastValueFrom(
      of<ToolCall>({ id: 'r', name: 'fetch', args: {} }).pipe(
        runWithEvents((hooks) => () => of(record).pipe(tap((r) => { hooks!.received!(r); hooks!.retry!(r, 1, { code: 'tool_error', message: 'flaky', cause: undefined }, 250); }), ignoreElements()), { observers: [], progress: { maxChars: 10, maxEvents: 10 }, clock: () => performance.now() }),
        toArray(),
      ),
    );
    expect(events.map((e) => e.type)).toEqual(['received', 'retry']);
    expect(events[1]).toMatchObject({ attempt: 1, delayMs: 250, error: { code: 'tool_error' }, id: 'r' });
  });
});
