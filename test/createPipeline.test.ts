import { from, interval, lastValueFrom, map, Observable, Subject, take, tap } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ConfigError, createPipeline, defineTool, DurableTurnError, executeTools, memoryJournal, SourceError, type ToolCall, type ToolContext } from '../src/index.js';
import { sleep } from './faults/helpers.js';

const wait = defineTool({
  name: 'wait',
  description: 'wait',
  input: z.object({ ms: z.number(), fail: z.boolean().optional() }),
  mode: 'parallel',
  execute: async ({ ms, fail }, { signal }) => {
    await sleep(ms, signal);
    if (fail) throw new Error('it broke');
    return ms;
  },
});
const call = (id: string, ms: number, fail = false): ToolCall => ({ id, name: 'wait', args: { ms, fail } });

describe('createPipeline().run', () => {
  it('accepts arrays, iterables, async iterables and Observables', async () => {
    const pipeline = createPipeline({ tools: [wait] });
    const calls = [call('a', 2), call('b', 1)];
    async function* asyncCalls() {
      yield* calls;
    }
    for (const source of [calls, new Set(calls), asyncCalls(), from(calls)]) {
      const results = await pipeline.run(source);
      expect(results.map((r) => [r.id, r.status, r.value])).toEqual([['a', 'ok', 2], ['b', 'ok', 1]]);
    }
  });

  it('rejects a source that is not one, with a ConfigError', async () => {
    const pipeline = createPipeline({ tools: [wait] });
    await expect(pipeline.run(42 as never)).rejects.toBeInstanceOf(ConfigError);
    await expect(pipeline.run('calls' as never)).rejects.toThrow(/run: `calls` must be an array/);
  });

  it('results are frozen, carry the effective args and timing', async () => {
    const [result] = await createPipeline({ tools: [wait] }).run([{ id: 'a', name: 'wait', args: '{"ms":1}' }]);
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.isFrozen(result!.timing)).toBe(true);
    expect(result!.args).toEqual({ ms: 1 });
    const { timing } = result!;
    expect(timing.startedAt!).toBeGreaterThanOrEqual(timing.receivedAt);
    expect(timing.endedAt!).toBeGreaterThanOrEqual(timing.startedAt!);
    expect(timing.durations.execute).toBeGreaterThan(0);
    expect(timing.durations.total).toBeGreaterThanOrEqual(timing.durations.execute);
  });

  it("with onError 'cancel-rest' a failure cancels the rest: running siblings abort, queued ones never start", async () => {
    const seen: string[] = [];
    const spy = defineTool({
      name: 'spy',
      description: 'spy',
      input: z.object({ ms: z.number() }),
      mode: 'parallel',
      execute: async ({ ms }, ctx) => {
        seen.push(`start ${ctx.callId}`);
        try {
          await sleep(ms, ctx.signal);
        } finally {
          seen.push(`${ctx.callId} aborted=${ctx.signal.aborted}`);
        }
      },
    });
    const pipeline = createPipeline({ tools: [wait, spy], concurrency: 2, onError: 'cancel-rest' });
    const results = await pipeline.run([
      { id: 'long', name: 'spy', args: { ms: 1000 } },
      call('bad', 5, true),
      { id: 'queued', name: 'spy', args: { ms: 1 } },
    ]);
    expect(results.map((r) => r.status)).toEqual(['cancelled', 'error', 'cancelled']);
    expect(results[0]!.error).toMatchObject({ code: 'cancelled', reason: 'sibling_failed', byCallId: 'bad', started: true });
    expect(results[2]!.error).toMatchObject({ code: 'cancelled', started: false });
    expect(results[0]!.content).toMatch(/^Cancelled while running: call "bad" \(wait\) failed/);
    await sleep(5);
    expect(seen).toEqual(['start long', 'long aborted=true']);
  });

  it('calls of its turn arriving after a cancel-rest are cancelled on arrival; another turn is not', async () => {
    const calls = new Subject<ToolCall>();
    const results: string[] = [];
    const done = new Promise<void>((resolve) =>
      calls.pipe(createPipeline({ tools: [wait], onError: 'cancel-rest' }).operator()).subscribe({ next: (r) => results.push(r.status), complete: resolve }),
    );
    calls.next(call('bad', 1, true));
    await sleep(10);
    calls.next(call('late', 1));
    calls.next({ ...call('next turn', 1), turn: 'response_2' });
    calls.complete();
    await done;
    expect(results).toEqual(['error', 'cancelled', 'ok']);
  });

  it("a tool's own onError overrides the pipeline's", async () => {
    const flaky = defineTool({ name: 'flaky', description: 'f', input: z.object({}), mode: 'parallel', onError: 'continue', execute: () => Promise.reject(new Error('meh')) });
    const results = await createPipeline({ tools: [wait, flaky] }).run([{ id: 'f', name: 'flaky', args: {} }, call('w', 5)]);
    expect(results.map((r) => r.status)).toEqual(['error', 'ok']);
  });

  it('ctx.cancelRest() cancels every other unfinished call on purpose; the caller goes on', async () => {
    const finder = defineTool({
      name: 'find',
      description: 'f',
      input: z.object({}),
      mode: 'parallel',
      execute: async (_args, ctx: ToolContext) => {
        await sleep(2);
        ctx.cancelRest();
        return 'found it';
      },
    });
    const results = await createPipeline({ tools: [wait, finder], concurrency: 2 }).run([
      call('slow', 500),
      { id: 'f', name: 'find', args: {} },
      call('queued', 1),
    ]);
    expect(results.map((r) => r.status)).toEqual(['cancelled', 'ok', 'cancelled']);
    expect(results[0]!.error).toMatchObject({ reason: 'cancel_requested', byCallId: 'f', started: true });
  });

  it('a timeout is an error result; the signal aborts with a TimeoutError', async () => {
    let reason: unknown;
    const stuck = defineTool({
      name: 'stuck',
      description: 's',
      input: z.object({}),
      timeoutMs: 10,
      execute: (_args, { signal }) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject((reason = signal.reason)), { once: true })),
    });
    const [result] = await createPipeline({ tools: [stuck] }).run([{ id: 's', name: 'stuck', args: {} }]);
    expect(result!.error).toMatchObject({ code: 'timeout', timeoutMs: 10 });
    expect((reason as DOMException).name).toBe('TimeoutError');
  });

  it('a body that ignores its signal is abandoned after abortGraceMs, so the pool moves on', async () => {
    const deaf = defineTool({ name: 'deaf', description: 'd', input: z.object({}), timeoutMs: 5, execute: () => sleep(300) });
    const pipeline = createPipeline({ tools: [deaf, wait], onError: 'continue', abortGraceMs: 20 });
    const started = performance.now();
    const results = await pipeline.run([{ id: 'd', name: 'deaf', args: {} }, { id: 'x', name: 'wait', args: { ms: 1 } }]);
    expect(results.map((r) => r.status)).toEqual(['error', 'ok']);
    // the exclusive `deaf` held its slot for the grace period, not for its whole 300 ms
    expect(results[1]!.timing.startedAt! - started).toBeLessThan(250);
    expect(results[1]!.timing.startedAt! - results[0]!.timing.endedAt!).toBeGreaterThanOrEqual(15);
  });

  it('streamed outputs are collected; a stream failing midway keeps what arrived', async () => {
    const lines = defineTool({
      name: 'lines',
      description: 'l',
      input: z.object({ fail: z.boolean() }),
      mode: 'parallel',
      onError: 'continue',
      execute: async function* ({ fail }) {
        yield 'one\n';
        yield 'two\n';
        if (fail) throw new Error('disk gone');
      },
    });
    const numbers = defineTool({ name: 'numbers', description: 'n', input: z.object({}), mode: 'parallel', execute: () => interval(1).pipe(take(3), map((i) => ({ i }))) });
    const results = await createPipeline({ tools: [lines, numbers] }).run([
      { id: 'a', name: 'lines', args: { fail: false } },
      { id: 'b', name: 'lines', args: { fail: true } },
      { id: 'c', name: 'numbers', args: {} },
    ]);
    expect(results[0]).toMatchObject({ status: 'ok', value: ['one\n', 'two\n'], streamed: true, content: 'one\ntwo\n' });
    expect(results[1]).toMatchObject({ status: 'error', partial: ['one\n', 'two\n'] });
    expect(results[1]!.content).toBe('one\ntwo\n\n[output incomplete] Tool "lines" failed: disk gone');
    expect(results[2]!.content).toBe('{"i":0}\n{"i":1}\n{"i":2}');
  });

  it('a value without a JSON form → invalid_output, not a stream error', async () => {
    const big = defineTool({ name: 'big', description: 'b', input: z.object({}), execute: () => 10n });
    const [result] = await createPipeline({ tools: [big] }).run([{ id: 'b', name: 'big', args: {} }]);
    expect(result!.error?.code).toBe('invalid_output');
  });

  it("a tool's render gives the model-facing text and leaves the value to the host", async () => {
    const report = defineTool({
      name: 'report',
      description: 'r',
      input: z.object({ mode: z.enum(['ok', 'throw', 'number']) }),
      execute: ({ mode }) => ({ mode, rows: [1, 2, 3] }),
      render: (value) => {
        if (value.mode === 'throw') throw new Error('cannot render');
        if (value.mode === 'number') return 42 as unknown as string;
        return `${value.rows.length} rows`;
      },
    });
    const results = await createPipeline({ tools: [report], onError: 'continue' }).run(
      (['ok', 'throw', 'number'] as const).map((mode) => ({ id: mode, name: 'report', args: { mode } })),
    );
    expect(results[0]).toMatchObject({ status: 'ok', content: '3 rows', value: { mode: 'ok', rows: [1, 2, 3] } });
    expect(results[1]!.error).toMatchObject({ code: 'invalid_output', message: expect.stringContaining('cannot render') });
    expect(results[2]!.error).toMatchObject({ code: 'invalid_output', message: expect.stringContaining('not a string') });
    expect(() => defineTool({ name: 'x', description: 'x', input: z.object({}), execute: () => 1, render: 'text' as never })).toThrow(/render/);
  });

  it('the run signal cancels every unfinished call and still resolves with a result for each', async () => {
    const controller = new AbortController();
    const pipeline = createPipeline({ tools: [wait], concurrency: 1 });
    const pending = pipeline.run([call('a', 1), call('b', 1000), call('c', 1)], { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const results = await pending;
    expect(results.map((r) => r.status)).toEqual(['ok', 'cancelled', 'cancelled']);
    expect(results[1]!.error).toMatchObject({ reason: 'aborted', started: true });
    expect(results[2]!.error).toMatchObject({ reason: 'aborted', started: false });
  });

  it('the run signal stops pulling from an endless source', async () => {
    const controller = new AbortController();
    let pulled = 0;
    async function* endless() {
      for (let i = 0; ; i++) {
        pulled++;
        yield call(`c${i}`, 1);
        await sleep(2);
      }
    }
    setTimeout(() => controller.abort(), 30);
    const results = await createPipeline({ tools: [wait] }).run(endless(), { signal: controller.signal });
    expect(results.length).toBe(pulled);
    expect(results.length).toBeGreaterThan(0);
  });

  it('a failing source rejects with a SourceError holding the results of every call received', async () => {
    const source = new Observable<ToolCall>((subscriber) => {
      subscriber.next(call('a', 5));
      subscriber.error(new Error('stream cut'));
    });
    const failure = await createPipeline({ tools: [wait] }).run(source).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SourceError);
    expect((failure as SourceError).results.map((r) => [r.id, r.status])).toEqual([['a', 'ok']]);
    expect((failure as SourceError).message).toContain('stream cut');
  });

  it('unsubscribing aborts running bodies and leaves no abort listener on the run signal', async () => {
    const controller = new AbortController();
    const add = vi.spyOn(controller.signal, 'addEventListener');
    const remove = vi.spyOn(controller.signal, 'removeEventListener');
    let bodySignal: AbortSignal | undefined;
    const hang = defineTool({ name: 'hang', description: 'h', input: z.object({}), execute: (_a, ctx) => ((bodySignal = ctx.signal), new Promise(() => {})) });
    const subscription = from([{ id: 'h', name: 'hang', args: {} }])
      .pipe(createPipeline({ tools: [hang] }).operator({ signal: controller.signal }))
      .subscribe();
    subscription.unsubscribe();
    expect(bodySignal?.aborted).toBe(true);
    expect(add.mock.calls.length).toBe(remove.mock.calls.length);
  });
});

describe('createPipeline().operator', () => {
  const failing = () =>
    new Observable<ToolCall>((subscriber) => {
      subscriber.next(call('a', 5));
      subscriber.next(call('b', 1));
      subscriber.error(new Error('stream cut'));
    });
  const failureOf = (results$: Observable<unknown>) => lastValueFrom(results$).then(() => undefined, (error: unknown) => error);

  it('a failing source errors with a SourceError counting the results given out; it keeps none of them', async () => {
    const pipeline = createPipeline({ tools: [wait] });
    const seen: string[] = [];
    const failure = await failureOf(failing().pipe(pipeline.operator(), tap((r) => seen.push(r.id))));
    expect(failure).toBeInstanceOf(SourceError);
    // The subscriber had each result already: a long-lived subscription keeps none (issue 24's memory bound).
    expect((failure as SourceError).results).toEqual([]);
    expect((failure as SourceError).answered).toBe(2);
    expect((failure as SourceError).message).toBe('the source of tool calls failed after 2 call(s): stream cut');
    expect((failure as SourceError).cause).toMatchObject({ message: 'stream cut' });
    expect(seen).toEqual(['a', 'b']); // given out before the error, as run() gives them in the error only
    // Each subscription counts its own.
    const results$ = failing().pipe(pipeline.operator());
    const [one, two] = await Promise.all([failureOf(results$), failureOf(results$)]);
    expect(one).not.toBe(two);
    expect((two as SourceError).answered).toBe(2);
  });

  it("a durable turn's DurableTurnError passes through, as in run()", async () => {
    const pipeline = createPipeline({ tools: [wait], journal: memoryJournal(), approvalSecret: 'a test secret that is long enough to sign with' });
    await pipeline.run([call('a', 1)], { turn: 't' });
    const fromRun = await pipeline.run([call('a', 1)], { turn: 't' }).catch((error: unknown) => error);
    const fromOperator = await failureOf(from([call('a', 1)]).pipe(pipeline.operator({ turn: 't' })));
    expect(fromRun).toMatchObject({ name: 'DurableTurnError', code: 'turn_exists' });
    expect(fromOperator).toBeInstanceOf(DurableTurnError);
    expect(fromOperator).toMatchObject({ code: 'turn_exists', message: (fromRun as Error).message });
  });
});

describe('executeTools', () => {
  it('is createPipeline(options).operator()', async () => {
    const results: unknown[] = [];
    await new Promise<void>((resolve) =>
      from([call('a', 1)]).pipe(executeTools({ tools: [wait] })).subscribe({ next: (r) => results.push(r.value), complete: resolve }),
    );
    expect(results).toEqual([1]);
  });
});
