import fc from 'fast-check';
import { firstValueFrom, Observable, of, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type ToolCall, type ToolResult } from '../src/index.js';
import { sleep } from './faults/helpers.js';

/** A tool that records which calls it ran (telling `onStart` each time), and answers after `ms`. */
function recorded(onStart: (ran: readonly string[]) => void = () => undefined) {
  const ran: string[] = [];
  const wait = defineTool({
    name: 'wait',
    description: 'wait',
    input: z.object({ ms: z.number() }),
    mode: 'parallel',
    execute: async ({ ms }, { signal, callId }) => {
      ran.push(callId);
      onStart(ran);
      await sleep(ms, signal);
      return ms;
    },
  });
  return { ran, wait };
}
const callsOf = (n: number, ms = 1): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'wait', args: { ms } }));
const aborted = () => AbortSignal.abort();
const outline = (results: readonly ToolResult[]) => results.map((r) => [r.id, r.status, r.error?.code === 'cancelled' ? r.error.reason : r.error?.code]);
const allCancelled = (calls: readonly ToolCall[]) => calls.map((c) => [c.id, 'cancelled', 'aborted']);

describe('a run whose signal aborted before it began', () => {
  it('answers every call of an array, `cancelled`, and runs none — pulled or pushed at once', async () => {
    const { ran, wait } = recorded();
    const calls = callsOf(40);
    // Pulled (at most maxPending + concurrency = 3 taken in and unanswered), and pushed at once.
    const pulled = await createPipeline({ tools: [wait], concurrency: 1, maxPending: 2 }).run(calls, { signal: aborted() });
    expect(outline(pulled)).toEqual(allCancelled(calls));
    expect(pulled.every((r) => r.error?.code === 'cancelled' && !r.error.started)).toBe(true);
    const afterResponse = defineTool({ name: 'late', description: 'l', input: z.object({}), start: 'after-response', execute: () => 'late' });
    const pushed = await createPipeline({ tools: [wait, afterResponse] }).run(calls, { signal: aborted() });
    expect(outline(pushed)).toEqual(allCancelled(calls));
    expect(ran).toEqual([]);
  });

  it('answers every call of a Set, any collection given at once', async () => {
    const { ran, wait } = recorded();
    const results = await createPipeline({ tools: [wait], concurrency: 1, maxPending: 1 }).run(new Set(callsOf(10)), { signal: aborted() });
    expect(outline(results)).toEqual(allCancelled(callsOf(10)));
    expect(ran).toEqual([]);
  });

  it('a call that is not one still gets its own error', async () => {
    const { wait } = recorded();
    const results = await createPipeline({ tools: [wait] }).run([{ id: 'a', name: 'wait', args: { ms: 1 } }, { id: '', name: 'wait' } as ToolCall, { id: 'c', name: 'nope', args: {} }], { signal: aborted() });
    expect(outline(results)).toEqual([['a', 'cancelled', 'aborted'], ['', 'error', 'invalid_call'], ['c', 'error', 'unknown_tool']]);
  });

  it('events() of an array: a result event for every call', async () => {
    const { ran, wait } = recorded();
    const calls = callsOf(12);
    const events = await firstValueFrom(createPipeline({ tools: [wait], concurrency: 2, maxPending: 1 }).events(calls, { signal: aborted() }).pipe(toArray()));
    const results = events.flatMap((event) => (event.type === 'result' ? [event.result] : []));
    expect(outline(results)).toEqual(allCancelled(calls));
    expect(ran).toEqual([]);
  });

  it('a durable turn answers every call too, and journals the answers', async () => {
    const { ran, wait } = recorded();
    const pipeline = createPipeline({ tools: [wait], journal: memoryJournal(), approvalSecret: 'a test secret that is long enough to sign with' });
    const calls = callsOf(5);
    expect(outline(await pipeline.run(calls, { turn: 't', signal: aborted() }))).toEqual(allCancelled(calls));
    expect(outline(await pipeline.resume('t'))).toEqual(allCancelled(calls)); // replayed, not run
    const events = await firstValueFrom(pipeline.events(calls, { turn: 'u', signal: aborted() }).pipe(toArray()));
    expect(outline(events.flatMap((event) => (event.type === 'result' ? [event.result] : [])))).toEqual(allCancelled(calls));
    expect(ran).toEqual([]);
  });

  it('a resume aborted before it began leaves the calls that wait for a human suspended, not cancelled for good', async () => {
    const { ran, wait } = recorded();
    const journal = memoryJournal();
    const pipeline = createPipeline({ tools: [wait], journal, approvalSecret: 'a test secret that is long enough to sign with', pre: [askTools(['wait'])], approve: suspendApprovals() });
    const calls = callsOf(2);
    expect(outline(await pipeline.run(calls, { turn: 't' }))).toEqual([['c0', 'suspended', 'approval_pending'], ['c1', 'suspended', 'approval_pending']]);
    const [first] = await pipeline.pendingApprovals('t');
    // Aborted with an answer for c0: c0 is cancelled (this resume's to run), c1 still waits.
    const results = await pipeline.resume('t', { answers: [{ token: first!.token, answer: 'allowed-once' }], signal: aborted() });
    expect(outline(results)).toEqual([['c0', 'cancelled', 'aborted'], ['c1', 'suspended', 'approval_pending']]);
    const [second] = await pipeline.pendingApprovals('t');
    expect(second).toMatchObject({ callId: 'c1' });
    expect(outline(await pipeline.resume('t', { answers: [{ token: second!.token, answer: 'allowed-once' }] }))).toEqual([['c0', 'cancelled', 'aborted'], ['c1', 'ok', undefined]]);
    expect(ran).toEqual(['c1']);
  });

  it('reads nothing from an Observable, an async iterable or a generator (which may be endless)', async () => {
    const { wait } = recorded();
    const pipeline = createPipeline({ tools: [wait] });
    let subscribed = 0;
    const observed = new Observable<ToolCall>((subscriber) => {
      subscribed++;
      for (const call of callsOf(3)) subscriber.next(call);
      subscriber.complete();
    });
    let pulled = 0;
    const iterable: AsyncIterable<ToolCall> = {
      [Symbol.asyncIterator]: () => ({ next: async () => (pulled++, { done: false, value: callsOf(1)[0]! }) }),
    };
    expect(await pipeline.run(observed, { signal: aborted() })).toEqual([]);
    expect(await pipeline.run(iterable, { signal: aborted() })).toEqual([]);
    function* endless() {
      for (let i = 0; ; i++) {
        pulled++;
        yield { id: `g${i}`, name: 'wait', args: { ms: 1 } };
      }
    }
    expect(await pipeline.run(endless(), { signal: aborted() })).toEqual([]);
    expect(await firstValueFrom(observed.pipe(pipeline.operator({ signal: aborted() }), toArray()))).toEqual([]);
    expect(await firstValueFrom(pipeline.events(observed, { signal: aborted() }).pipe(toArray()))).toEqual([]);
    expect([subscribed, pulled]).toEqual([0, 0]);
    // operator() takes an Observable whatever it came from: an array made one is not read either.
    expect(await firstValueFrom(of(...callsOf(3)).pipe(pipeline.operator({ signal: aborted() }), toArray()))).toEqual([]);
  });
});

describe('a run whose signal aborts while it runs', () => {
  it('answers every call of an array, those it had not taken in yet too; no body starts after the abort', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 60 }),
        fc.boolean(),
        async (n, concurrency, maxPending, abortAt, viaEvents) => {
          const controller = new AbortController();
          // The `abortAt`-th body to start aborts the run: the puller holds at most maxPending + concurrency calls then.
          const { ran, wait } = recorded((started) => started.length === abortAt && controller.abort());
          const calls = callsOf(n, 1);
          const pipeline = createPipeline({ tools: [wait], concurrency, maxPending });
          const options = { signal: controller.signal };
          const results = viaEvents
            ? (await firstValueFrom(pipeline.events(calls, options).pipe(toArray()))).flatMap((event) => (event.type === 'result' ? [event.result] : []))
            : await pipeline.run(calls, options);
          expect(results.map((r) => r.id)).toEqual(calls.map((c) => c.id));
          for (const result of results) expect(result.status === 'ok' || (result.error?.code === 'cancelled' && result.error.reason === 'aborted')).toBe(true);
          expect(ran.length).toBe(Math.min(abortAt, n));
        },
      ),
      { numRuns: 80 },
    );
  });
});

describe('the reason a run was aborted with', () => {
  /** A run with a call in each place an abort reaches: running, queued, in its pre-execute chain, awaiting approval. */
  async function abortedEverywhere(abort: (controller: AbortController) => void) {
    const seen = new Map<string, unknown>(); // what each signal aborted with
    const hold = (key: string, signal: AbortSignal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => (seen.set(key, signal.reason), reject(signal.reason)), { once: true }));
    const body = defineTool({ name: 'body', description: 'b', input: z.object({}), mode: 'parallel', execute: (_args, { signal }) => hold('body', signal) });
    const gated = defineTool({ name: 'gated', description: 'g', input: z.object({}), mode: 'parallel', execute: () => 'ran' });
    const policy = Object.assign((ctx: { call: ToolCall; signal: AbortSignal }) => (ctx.call.id === 'pre' ? hold('policy', ctx.signal) : undefined), { policyName: 'hangs' });
    const controller = new AbortController();
    const pipeline = createPipeline({
      tools: [body, gated],
      concurrency: 1,
      pre: [policy, askTools(['gated'])],
      approve: (_request, signal) => hold('approver', signal),
    });
    const calls: ToolCall[] = [
      { id: 'running', name: 'body', args: {} },
      { id: 'queued', name: 'body', args: {} },
      { id: 'pre', name: 'gated', args: {} },
      { id: 'asked', name: 'gated', args: {} },
    ];
    const pending = pipeline.run(calls, { signal: controller.signal });
    await sleep(5);
    abort(controller);
    return { results: await pending, seen };
  }

  it('reaches every cancelled result, in its message too, and the signals of the work it stopped', async () => {
    const { results, seen } = await abortedEverywhere((controller) => controller.abort('next message'));
    expect(results.map((r) => [r.id, r.status, r.error?.code === 'cancelled' && r.error.abortReason])).toEqual([
      ['running', 'cancelled', 'next message'],
      ['queued', 'cancelled', 'next message'],
      ['pre', 'cancelled', 'next message'],
      ['asked', 'cancelled', 'next message'],
    ]);
    expect(results[0]!.error).toEqual({ code: 'cancelled', message: 'Cancelled while running: the run was aborted (next message).', reason: 'aborted', abortReason: 'next message', started: true });
    expect(results[1]!.content).toBe('Not run: the run was aborted (next message). The call itself was not at fault; retry it if it is still needed.');
    expect([...seen.keys()].sort()).toEqual(['approver', 'body', 'policy']);
    // (The approver's signal says why the question was withdrawn, in its own words.)
    for (const key of ['body', 'policy']) expect((seen.get(key) as DOMException).message).toBe('cancelled (aborted: next message)');
  });

  it('is absent when the signal was aborted without one; an error gives its message, another value a description, cut to 200 characters', async () => {
    const without = await abortedEverywhere((controller) => controller.abort());
    for (const result of without.results) expect(result.error).not.toHaveProperty('abortReason');
    expect(without.results[0]!.error?.message).toBe('Cancelled while running: the run was aborted.');
    for (const key of ['body', 'policy']) expect((without.seen.get(key) as DOMException).message).toBe('cancelled (aborted)');

    const reasonOf = async (reason: unknown) => {
      const { results } = await abortedEverywhere((controller) => controller.abort(reason));
      const error = results[0]!.error!;
      return error.code === 'cancelled' ? error.abortReason : undefined;
    };
    expect(await reasonOf(new Error('the user left'))).toBe('the user left');
    expect(await reasonOf(new DOMException('superseded', 'AbortError'))).toBe('superseded'); // an AbortError of one's own says something
    expect(await reasonOf({ why: 'secret' })).toBe('an object');
    const long = await reasonOf('x'.repeat(1000));
    expect(long).toHaveLength(200 + ' (1000 characters)'.length);
  });

  it('is JSON: a durable turn journals it and a resume replays it', async () => {
    const journal = memoryJournal();
    const hang = defineTool({ name: 'hang', description: 'h', input: z.object({}), mode: 'parallel', execute: (_a, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))) });
    const pipeline = createPipeline({ tools: [hang], journal, approvalSecret: 'a test secret that is long enough to sign with' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('superseded by the next turn')), 5);
    const [first] = await pipeline.run([{ id: 'h', name: 'hang', args: {} }], { turn: 't', signal: controller.signal });
    expect(first!.error).toMatchObject({ code: 'cancelled', abortReason: 'superseded by the next turn', started: true });
    expect(JSON.parse(JSON.stringify(first!.error))).toEqual(first!.error);
    const [replayed] = await pipeline.resume('t');
    expect(replayed!.error).toEqual(first!.error);
  });
});
