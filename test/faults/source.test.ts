import { concat, Observable, of, Subject, throwError } from 'rxjs';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, SourceError, type Approver, type PipelineOptions, type PostPolicy, type PrePolicy, type ToolCall, type ToolResult } from '../../src/index.js';
import { expectOneEach, outline, record, sleep } from './helpers.js';

/** Watches bodies: which started, how many ran at once, whether an exclusive one overlapped another. */
const watch = { started: [] as string[], running: 0, maxRunning: 0, exclusiveOverlap: false, exclusiveRunning: false };
beforeEach(() => Object.assign(watch, { started: [], running: 0, maxRunning: 0, exclusiveOverlap: false, exclusiveRunning: false }));

/** The Subject re-entrant bodies feed; set per test. */
let feed: Subject<ToolCall> | undefined;
let spawned: string[] = [];
/** Two children per call down to depth 3 (15 calls), exclusive at even depths. */
const spawnChildren = (tag: string, depth: number, sync: boolean) => {
  if (depth >= 3) return;
  for (const suffix of ['a', 'b']) {
    const id = `${tag}${suffix}`;
    spawned.push(id);
    feed!.next({ id, name: depth % 2 === 0 ? 'x' : 'p', args: { tag: id, depth: depth + 1, sync } });
  }
};

const tool = (name: string, mode: 'parallel' | 'exclusive') =>
  defineTool({
    name,
    description: name,
    input: z.object({ tag: z.string(), ms: z.number().default(0), depth: z.number().optional(), sync: z.boolean().default(false) }),
    mode,
    execute: ({ tag, ms, depth, sync }, ctx) => {
      watch.started.push(tag);
      if (watch.exclusiveRunning || (mode === 'exclusive' && watch.running > 0)) watch.exclusiveOverlap = true;
      watch.maxRunning = Math.max(watch.maxRunning, ++watch.running);
      if (mode === 'exclusive') watch.exclusiveRunning = true;
      if (depth !== undefined) spawnChildren(tag, depth, sync); // re-entrant: feeds the source from inside a body
      const done = () => {
        watch.running--;
        if (mode === 'exclusive') watch.exclusiveRunning = false;
        return tag;
      };
      if (sync) return done();
      // ms 0: an async no-op (a microtask, no timer)
      return (ms === 0 ? Promise.resolve() : sleep(ms, ctx.signal)).then(done, (error: unknown) => (done(), Promise.reject(error)));
    },
  });
const tools = [tool('p', 'parallel'), tool('x', 'exclusive')];
const p = (tag: string, ms = 0): ToolCall => ({ id: tag, name: 'p', args: { tag, ms } });
const x = (tag: string, ms = 0): ToolCall => ({ id: tag, name: 'x', args: { tag, ms } });
const pipeline = (options: Omit<PipelineOptions, 'tools'> = {}) => createPipeline({ tools, ...options });

/** Slow policies and an approval, so a call is mid-stage when the source ends. */
const slowPre: PrePolicy = async (ctx) => (await sleep(ctx.call.id === 'a' ? 10 : 0), ctx.call.id === 'b' ? { decision: 'ask' } : undefined);
const slowApprove: Approver = async () => (await sleep(15), 'allowed-once');
const slowPost: PostPolicy = async () => (await sleep(10), undefined);
const STAGED = { pre: [slowPre], approve: slowApprove, post: [slowPost] };

describe('a source that errors midway', () => {
  const cut = new Error('stream cut');
  /** a runs, b waits for the pool (concurrency 1), c is an exclusive barrier; the source errors at 5 ms. */
  const failing = () =>
    new Observable<ToolCall>((subscriber) => {
      subscriber.next(p('a', 20));
      subscriber.next(p('b', 1));
      subscriber.next(x('c', 1));
      const timer = setTimeout(() => subscriber.error(cut), 5);
      return () => clearTimeout(timer);
    });

  it('run() rejects with a SourceError holding a result for every call received', async () => {
    const failure = await pipeline({ concurrency: 1 }).run(failing()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SourceError);
    const { results, cause, message } = failure as SourceError;
    expectOneEach(results, ['a', 'b', 'c']);
    expect(outline(results)).toEqual([['a', 'ok', undefined], ['b', 'ok', undefined], ['c', 'ok', undefined]]);
    expect(cause).toBe(cut);
    expect(message).toBe('the source of tool calls failed after 3 call(s): stream cut');
  });

  it.each([
    ['no policies', {}],
    ['calls mid pre-execute, approval and post-execute', STAGED],
  ])('operator(): the error arrives after the results (%s)', async (_label, options) => {
    const recording = record(failing().pipe(pipeline({ concurrency: 1, ...options }).operator()));
    const { error } = (await recording.done) as { error: unknown };
    // A SourceError, as run() rejects with: how many results were given out (the subscriber has them), and the source's error as its cause.
    expect(error).toBeInstanceOf(SourceError);
    expect((error as SourceError).cause).toBe(cut);
    expect((error as SourceError).answered).toBe(recording.results.length);
    expect((error as SourceError).results).toEqual([]);
    expectOneEach(recording.results, ['a', 'b', 'c']);
    expect(recording.events).toEqual(['a:ok', 'b:ok', 'c:ok', 'error']);
  });

  it('a synchronous error right after synchronous calls with synchronous bodies', async () => {
    const sync = (tag: string): ToolCall => ({ id: tag, name: 'p', args: { tag, sync: true } });
    const failure = await pipeline().run(concat(of(sync('a'), sync('b')), throwError(() => cut))).catch((error: unknown) => error);
    expect((failure as SourceError).results.map((r) => [r.id, r.status])).toEqual([['a', 'ok'], ['b', 'ok']]);
  });

  it('an async iterable source that throws', async () => {
    async function* calls() {
      yield p('a', 5);
      yield x('b');
      throw cut;
    }
    const failure = await pipeline().run(calls()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SourceError);
    expectOneEach((failure as SourceError).results, ['a', 'b']);
  });
});

describe('a source that completes while calls run', () => {
  it.each([
    ['no policies', {}],
    ['calls mid pre-execute, approval and post-execute', STAGED],
  ])('every result still arrives, then complete (%s)', async (_label, options) => {
    const source = new Subject<ToolCall>();
    const recording = record(source.pipe(pipeline(options).operator()));
    source.next(p('a', 20));
    source.next(p('b', 5));
    source.next(x('c', 1));
    source.complete();
    expect(await recording.done).toBe('complete');
    expect(recording.events).toEqual(['a:ok', 'b:ok', 'c:ok', 'complete']);
  });
});

describe('a synchronous burst of calls', () => {
  const burst = (n: number) => Array.from({ length: n }, (_, i) => (i % 7 === 3 ? x(`c${i}`) : p(`c${i}`)));
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);

  it('10,000 mixed parallel/exclusive calls through run(): every result, in order', async () => {
    const results = await pipeline().run(burst(10_000));
    expectOneEach(results, ids(10_000));
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    expect(watch.maxRunning).toBeLessThanOrEqual(10);
    expect(watch.exclusiveOverlap).toBe(false);
  });

  it('10,000 calls pushed synchronously into a Subject, then complete', async () => {
    const source = new Subject<ToolCall>();
    const recording = record(source.pipe(pipeline({ concurrency: 4 }).operator()));
    for (const call of burst(10_000)) source.next(call);
    source.complete();
    expect(await recording.done).toBe('complete');
    expectOneEach(recording.results, ids(10_000));
    expect(watch.maxRunning).toBeLessThanOrEqual(4);
    expect(watch.exclusiveOverlap).toBe(false);
  });

  it('2,000 calls through pre- and post-execute policies', async () => {
    const results = await pipeline({ pre: [() => undefined], post: [() => undefined] }).run(burst(2_000));
    expectOneEach(results, ids(2_000));
    expect(results.every((r) => r.status === 'ok')).toBe(true);
  });
});

describe('re-entrant emission into the source Subject', () => {
  beforeEach(() => void (spawned = []));

  it.each([
    ['synchronous bodies', true, {}],
    ['asynchronous bodies', false, {}],
    ['bodies behind pre- and post-execute policies', false, { pre: [() => undefined], post: [() => undefined] }],
  ])('a tool body that calls subject.next() synchronously (%s): every call gets a result, in order', async (_label, sync, options) => {
    const source = (feed = new Subject<ToolCall>());
    const results: ToolResult[] = [];
    const done = new Promise<void>((resolve) =>
      source.pipe(pipeline(options).operator()).subscribe({
        next: (result) => results.push(result) === 15 && source.complete(), // the whole spawn tree is out
        complete: resolve,
      }),
    );
    spawned.push('r');
    source.next({ id: 'r', name: 'p', args: { tag: 'r', depth: 0, sync } });
    await done;
    expectOneEach(results, spawned);
    expect(spawned).toHaveLength(15);
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    expect(watch.exclusiveOverlap).toBe(false);
  });

  it.each([
    ['synchronous bodies', true],
    ['asynchronous bodies', false],
  ])('a results subscriber that calls subject.next() (and complete()) synchronously (%s)', async (_label, sync) => {
    const source = new Subject<ToolCall>();
    const sent: string[] = [];
    const send = () => {
      const i = sent.length;
      sent.push(`c${i}`);
      source.next({ id: `c${i}`, name: i % 3 === 0 ? 'x' : 'p', args: { tag: `c${i}`, sync } });
    };
    const events: string[] = [];
    const done = new Promise<void>((resolve) =>
      source.pipe(pipeline().operator()).subscribe({
        next: (result) => {
          events.push(result.id);
          if (sent.length < 50) send();
          else if (events.length === 50) source.complete();
        },
        complete: resolve,
      }),
    );
    send();
    await done;
    expect(events).toEqual(sent);
    expect(sent).toHaveLength(50);
  });
});

describe('feeding the Subject after the pipeline finished', () => {
  it('after the source completed: ignored, no crash', async () => {
    const source = new Subject<ToolCall>();
    const recording = record(source.pipe(pipeline().operator()));
    source.next(p('a'));
    source.complete();
    expect(await recording.done).toBe('complete');
    expect(() => source.next(p('late'))).not.toThrow();
    await sleep(5);
    expect(recording.events).toEqual(['a:ok', 'complete']);
    expect(watch.started).toEqual(['a']);
  });

  it('after the run signal aborted (the Subject still open): ignored, no body starts, no crash', async () => {
    const source = new Subject<ToolCall>();
    const controller = new AbortController();
    const recording = record(source.pipe(pipeline().operator({ signal: controller.signal })));
    source.next(p('a', 50));
    controller.abort();
    expect(await recording.done).toBe('complete');
    expect(recording.results[0]!.error).toMatchObject({ code: 'cancelled', reason: 'aborted', started: true });
    expect(() => (source.next(p('late')), source.next(x('later')), source.complete())).not.toThrow();
    await sleep(5);
    expect(recording.events).toEqual(['a:cancelled', 'complete']);
    expect(watch.started).toEqual(['a']);
  });
});
