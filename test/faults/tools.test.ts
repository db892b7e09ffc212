import { concat, from, interval, map, NEVER, of, range, take, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createPipeline, defineTool, retainText, type PipelineOptions, type ToolCall, type ToolContext, type ToolMode } from '../../src/index.js';
import { collectUnhandled, expectOneEach, never, outline, record, sleep, within } from './helpers.js';

/** A healthy parallel tool: its calls prove that the batch goes on after a fault. */
const echo = defineTool({
  name: 'echo',
  description: 'echo',
  input: z.object({ tag: z.string(), ms: z.number().default(0) }),
  mode: 'parallel',
  execute: async ({ tag, ms }, { signal }) => (await sleep(ms, signal), tag),
});
const echoCall = (tag: string, ms = 0): ToolCall => ({ id: tag, name: 'echo', args: { tag, ms } });
const badCall: ToolCall = { id: 'bad', name: 'bad', args: {} };
const IDS = ['bad', 'after1', 'after2'];

/** The faulty tool of a test: `bad`, with the given body. */
const bad = (execute: (args: object, ctx: ToolContext) => unknown, extra: { mode?: ToolMode; timeoutMs?: number } = {}) =>
  defineTool({ name: 'bad', description: 'faulty', input: z.object({}), mode: extra.mode ?? 'parallel', ...(extra.timeoutMs ? { timeoutMs: extra.timeoutMs } : {}), execute });

/** Runs `bad` then two healthy calls; `onError: 'continue'` unless the options say otherwise. */
const runBad = (tool: ReturnType<typeof bad>, options: Partial<PipelineOptions> = {}, calls = [badCall, echoCall('after1'), echoCall('after2')]) =>
  createPipeline({ tools: [tool, echo], onError: 'continue', ...options }).run(calls);

const expectAfterCallsRan = (results: Awaited<ReturnType<typeof runBad>>) =>
  expect(outline(results.slice(1))).toEqual([['after1', 'ok', undefined], ['after2', 'ok', undefined]]);

describe('bodies that throw or reject', () => {
  it.each([
    ['throws synchronously', () => { throw new Error('boom'); }],
    ['rejects', async () => { throw new Error('boom'); }],
    ['returns a thenable that rejects', () => ({ then: (_ok: unknown, fail: (e: unknown) => void) => fail(new Error('boom')) })],
    ['returns a thenable whose then() throws', () => ({ then() { throw new Error('boom'); } })],
  ])('%s → tool_error; the later calls still run', async (_label, body) => {
    const results = await runBad(bad(body));
    expectOneEach(results, IDS);
    expect(outline(results)[0]).toEqual(['bad', 'error', 'tool_error']);
    expect(results[0]!.content).toBe('Tool "bad" failed: boom');
    expectAfterCallsRan(results);
  });

  it('with the default onError the failure cancels the later calls, and each still gets its result', async () => {
    const results = await runBad(bad(() => { throw new Error('boom'); }), { onError: 'cancel-rest' });
    expectOneEach(results, IDS);
    expect(outline(results)).toEqual([['bad', 'error', 'tool_error'], ['after1', 'cancelled', 'cancelled'], ['after2', 'cancelled', 'cancelled']]);
    expect(results[1]!.error).toMatchObject({ reason: 'sibling_failed', byCallId: 'bad', started: false });
  });

  const oddValues: [string, unknown, string][] = [
    ['a string', 'disk on fire', 'disk on fire'],
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ['an object', { code: 7 }, 'an object'],
    ['a Symbol', Symbol('odd'), 'a symbol'],
    ['a BigInt', 10n, '10'],
  ];
  it.each(oddValues.flatMap(([label, value, text]) => [[`throws ${label}`, value, text, true] as const, [`rejects with ${label}`, value, text, false] as const]))(
    'a body that %s → tool_error with readable content; the cause is kept as thrown',
    async (_label, value, text, sync) => {
      const results = await runBad(bad(sync ? () => { throw value; } : () => Promise.reject(value)));
      expectOneEach(results, IDS);
      expect(results[0]!.content).toBe(`Tool "bad" failed: ${text}`);
      expect(results[0]!.error).toMatchObject({ code: 'tool_error' });
      expect((results[0]!.error as { cause: unknown }).cause).toBe(value);
      expectAfterCallsRan(results);
    },
  );

  const withMessage = (message: unknown) => Object.defineProperty(new Error('x'), 'message', { value: message });
  it.each([
    ['thrown, with a Symbol message', () => { throw withMessage(Symbol('m')); }],
    ['rejected, with a null-prototype object message', () => Promise.reject(withMessage(Object.create(null)))],
  ])('an Error %s → tool_error with readable content, the run settles', async (_label, body) => {
    const { value: results, unhandled } = await collectUnhandled(() => within(runBad(bad(body)), 150));
    expectOneEach(results, IDS);
    expect(outline(results)[0]).toEqual(['bad', 'error', 'tool_error']);
    expectAfterCallsRan(results);
    expect(unhandled).toEqual([]);
  });
});

describe('bodies that hang', () => {
  it.each([
    ['a promise', () => never()],
    ['an Observable', () => NEVER],
    ['an async generator', async function* () { await never(); }],
  ])('%s that never settles → timeout; its signal aborts; the later calls run', async (_label, make) => {
    let signal: AbortSignal | undefined;
    const tool = bad((_args, ctx) => ((signal = ctx.signal), make()), { mode: 'exclusive', timeoutMs: 10 });
    const results = await runBad(tool, { abortGraceMs: 10 });
    expectOneEach(results, IDS);
    expect(results[0]!.error).toEqual({ code: 'timeout', message: 'Tool "bad" timed out after 10 ms.', timeoutMs: 10 });
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as DOMException).name).toBe('TimeoutError');
    expectAfterCallsRan(results);
  });

  it.each(['resolves', 'rejects'])('a body that ignores its signal (and %s late) is abandoned after abortGraceMs; its outcome is dropped', async (late) => {
    let settledAt = Infinity;
    const deaf = bad(async () => {
      await sleep(100);
      settledAt = performance.now();
      if (late === 'rejects') throw new Error('too late');
      return 'too late';
    }, { mode: 'exclusive', timeoutMs: 5 });
    const pipeline = createPipeline({ tools: [deaf, echo], onError: 'continue', abortGraceMs: 10 });
    const recording = record(from([badCall, echoCall('after1'), echoCall('after2')]).pipe(pipeline.operator()));
    expect(await recording.done).toBe('complete');
    const { results, events } = recording;
    expectOneEach(results, IDS);
    expect(events).toEqual(['bad:error', 'after1:ok', 'after2:ok', 'complete']);
    expect(results[1]!.timing.startedAt! - results[0]!.timing.endedAt!).toBeGreaterThanOrEqual(5); // the grace period
    await sleep(110);
    expect(results[1]!.timing.startedAt!).toBeLessThan(settledAt); // the pool did not wait for the body
    expect(events).toHaveLength(4); // nothing more after the late outcome
  });

  it('with the default onError a hung body times out and cancels the rest', async () => {
    const results = await runBad(bad(() => never(), { mode: 'exclusive', timeoutMs: 5 }), { onError: 'cancel-rest', abortGraceMs: 5 });
    expectOneEach(results, IDS);
    expect(outline(results)).toEqual([['bad', 'error', 'timeout'], ['after1', 'cancelled', 'cancelled'], ['after2', 'cancelled', 'cancelled']]);
  });
});

describe('outputs that cannot be sent', () => {
  const circular = () => {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop['self'] = loop;
    return Promise.resolve(loop);
  };
  it.each([
    ['a circular object', circular, /circular/i],
    ['a BigInt', () => 10n, /BigInt/],
    ['an object holding a BigInt', () => ({ n: 1n }), /BigInt/],
    ['a function', () => () => 1, /a function has no JSON form/],
    ['a Symbol', () => Symbol('s'), /a symbol has no JSON form/],
    ['an object whose toJSON throws', () => ({ toJSON: () => { throw new Error('no JSON for you'); } }), /no JSON for you/],
  ])('%s → invalid_output with a clear message; the later calls run', async (_label, body, why) => {
    const results = await runBad(bad(body));
    expectOneEach(results, IDS);
    expect(results[0]).toMatchObject({ status: 'error', error: { code: 'invalid_output' }, started: true });
    expect(results[0]!.value).toBeUndefined();
    expect(results[0]!.content).toMatch(/^Tool "bad" returned a value that cannot be sent to the model: /);
    expect(results[0]!.content).toMatch(why);
    expectAfterCallsRan(results);
  });
});

describe('huge outputs', () => {
  const huge = 'x'.repeat(5 * 2 ** 20);

  it('a 5 MB string passes whole when no budget is set', async () => {
    const results = await runBad(bad(async () => huge));
    expectOneEach(results, IDS);
    expect(results[0]!.status).toBe('ok');
    expect(results[0]!.content === huge && results[0]!.value === huge).toBe(true);
    expect(results[0]!.omitted).toBeUndefined();
  });

  it('a 5 MB string under maxChars: the cut characters are counted exactly', async () => {
    const results = await runBad(bad(async () => huge), { retention: { tools: { bad: { maxChars: 1000 } } } });
    expectOneEach(results, IDS);
    expect(results[0]!.omitted).toEqual({ items: 0, characters: huge.length - 1000, lines: 0 });
    expect(results[0]!.content).toBe(retainText(huge, { maxChars: 1000 }).text);
    expect(results[0]!.content).toContain(`[... ${huge.length - 1000} characters omitted]`);
    expectAfterCallsRan(results);
  });

  it('100k lines under maxLines (head+tail): the cut lines and characters are counted exactly', async () => {
    const line = (i: number) => `line ${String(i).padStart(6, '0')} ${'.'.repeat(40)}\n`;
    const text = Array.from({ length: 100_000 }, (_, i) => line(i)).join('');
    const results = await runBad(bad(() => text), { retention: { default: { maxLines: 10, keep: 'head+tail' } } });
    expectOneEach(results, IDS);
    expect(results[0]!.omitted).toEqual({ items: 0, characters: 99_990 * line(0).length, lines: 99_990 });
    expect(results[0]!.content).toBe(`${line(0)}${line(1)}${line(2)}${line(3)}${line(4)}[... 99990 lines omitted]\n${line(99_995)}${line(99_996)}${line(99_997)}${line(99_998)}${line(99_999)}`);
  });

  it.each([
    ['an Observable of 100k items', () => range(0, 100_000)],
    ['an async generator of 10k items', async function* () { for (let i = 0; i < 10_000; i++) yield i; }],
  ])('%s under maxItems keeps the first items and counts the rest', async (label, body) => {
    const total = label.includes('100k') ? 100_000 : 10_000;
    const results = await runBad(bad(body), { retention: { tools: { bad: { maxItems: 3 } } } });
    expectOneEach(results, IDS);
    expect(results[0]).toMatchObject({ status: 'ok', value: [0, 1, 2], streamed: true, omitted: { items: total - 3, characters: 0, lines: 0 } });
    expect(results[0]!.content).toBe(`0\n1\n2\n[... ${total - 3} more items omitted]`);
  });

  it('a zero text budget is refused when the pipeline is built, or honoured', async () => {
    let pipeline;
    try {
      pipeline = createPipeline({ tools: [bad(async () => 'abc'), echo], onError: 'continue', retention: { default: { maxChars: 0 } } });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return;
    }
    const { value: results, unhandled } = await collectUnhandled(() => within(pipeline.run([badCall, echoCall('after1'), echoCall('after2')]), 150));
    expectOneEach(results, IDS);
    expect(results[0]!.omitted).toMatchObject({ characters: 3 });
    expect(unhandled).toEqual([]);
  });
});

describe('streamed outputs that fail midway', () => {
  it.each([
    ['an Observable', () => concat(of('a', 'b'), throwError(() => new Error('wire cut')))],
    ['an Observable erroring asynchronously', () => interval(1).pipe(take(3), map((i) => { if (i === 2) throw new Error('wire cut'); return 'ab'[i]; }))],
    ['an Observable erroring with a string', () => concat(of('a', 'b'), throwError(() => 'wire cut'))],
    ['an async generator', async function* () { yield 'a'; yield 'b'; throw new Error('wire cut'); }],
  ])('%s → tool_error, incomplete, the items that arrived kept; the later calls run', async (_label, body) => {
    const results = await runBad(bad(body));
    expectOneEach(results, IDS);
    expect(results[0]).toMatchObject({ status: 'error', error: { code: 'tool_error' }, incomplete: true, partial: ['a', 'b'], omitted: undefined });
    expect(results[0]!.content).toBe('ab\n[output incomplete] Tool "bad" failed: wire cut');
    expectAfterCallsRan(results);
  });

  it('a budget cuts the partial items too, counted apart from incomplete', async () => {
    const results = await runBad(bad(() => concat(of('a', 'b', 'c'), throwError(() => new Error('wire cut')))), { retention: { default: { maxItems: 1 } } });
    expectOneEach(results, IDS);
    expect(results[0]).toMatchObject({ incomplete: true, partial: ['a'], omitted: { items: 2, characters: 0, lines: 0 } });
  });
});

describe('ctx.cancelRest() misuse', () => {
  it('called twice, synchronously: the others are cancelled once; nothing crashes', async () => {
    const results = await runBad(bad((_args, ctx) => (ctx.cancelRest(), ctx.cancelRest(), 'done')), {}, [echoCall('before', 50), badCall, echoCall('after1')]);
    expectOneEach(results, ['before', 'bad', 'after1']);
    expect(outline(results)).toEqual([['before', 'cancelled', 'cancelled'], ['bad', 'ok', undefined], ['after1', 'cancelled', 'cancelled']]);
    expect(results[0]!.error).toMatchObject({ reason: 'cancel_requested', byCallId: 'bad', started: true });
    expect(results[2]!.error).toMatchObject({ reason: 'cancel_requested', byCallId: 'bad', started: false });
  });

  it('called after the body finished (and after the run): a no-op; the later calls run', async () => {
    let saved: ToolContext | undefined;
    let lateError: unknown;
    const tool = bad(async (_args, ctx) => {
      saved = ctx;
      setTimeout(() => { try { ctx.cancelRest(); } catch (error) { lateError = error; } }, 5);
      return 'done';
    });
    const results = await runBad(tool, {}, [badCall, echoCall('after1', 30), echoCall('after2', 30)]);
    expectOneEach(results, IDS);
    expect(outline(results)).toEqual([['bad', 'ok', undefined], ['after1', 'ok', undefined], ['after2', 'ok', undefined]]);
    expect(() => saved!.cancelRest()).not.toThrow();
    expect(lateError).toBeUndefined();
  });

  it('called by a timed-out body during its grace period: the others are not cancelled', async () => {
    const tool = bad(async (_args, ctx) => (await sleep(15), ctx.cancelRest(), 'late'), { timeoutMs: 5 });
    const results = await runBad(tool, { abortGraceMs: 200 }, [badCall, echoCall('after1', 100)]);
    expectOneEach(results, ['bad', 'after1']);
    expect(outline(results)).toEqual([['bad', 'error', 'timeout'], ['after1', 'ok', undefined]]);
  });
});

describe('an aborted async-iterable body', () => {
  it("keeps its slot until its return() settled (its finally ran): an exclusive call never overlaps the cleanup", async () => {
    const events: string[] = [];
    const stream = bad(
      () =>
        (async function* () {
          try {
            await sleep(20); // ignores the signal: the pending step resolves after the timeout
            yield 'late item';
          } finally {
            await sleep(20);
            events.push('stream cleaned up');
          }
        })(),
      { timeoutMs: 5 },
    );
    const exclusive = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => void events.push('exclusive ran') });
    const results = await createPipeline({ tools: [stream, exclusive], abortGraceMs: 1000, onError: 'continue' }).run([
      badCall,
      { id: 'w', name: 'write', args: {} },
    ]);
    expect(outline(results)).toEqual([['bad', 'error', 'timeout'], ['w', 'ok', undefined]]);
    expect(events).toEqual(['stream cleaned up', 'exclusive ran']);
  });
});
