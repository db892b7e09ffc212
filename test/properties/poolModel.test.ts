/**
 * The pool against the user's mental model (issue 25, item 4): for random streams of up to 200 calls —
 * parallel and exclusive tools, random latencies, failures (thrown at once or later) and arrival times,
 * `onError` `'continue'`, `'cancel-rest'` and the default (by mode) — the real pipeline, through
 * `operator()` over an Observable or `run()` over an async iterable, behaves exactly like the plain RxJS
 * reference in `test/support/poolReference.ts`:
 *
 *     calls → segments → concatMap(segment → segment.pipe(mergeMap(run, concurrency))) → in model order
 *
 * What is compared. fast-check's scheduler decides every external event, one at a time: a call arrives,
 * a body's latency ends (each step of it a task, shared by both sides: see `Latencies`), the source
 * ends. Both sides see the same events; after each one, once nothing is left to do but wait (a
 * macrotask turn), we record what each side did in reaction: the bodies it started (in order), the
 * bodies that ended (a set: aborts reach them in no promised order), the results it gave out (in
 * order; `operator()` only — `run()` gives them at the end) and whether it completed. The property is
 * that these reactions are equal after every event, and that the results (status, value, error code,
 * the cancelling call, `started`) are equal. So the running set is the same at every point, not only
 * the start order: the pool starts a call as soon as the rules allow and no sooner, never more than
 * `concurrency` at once, never past a barrier, and gives each result out as soon as the ones before it
 * are out — what the README's "Execute" and "Reorder" and DESIGN.md's "Execute" promise.
 *
 * Why sharing the latencies keeps the reference independent: all the two sides share is when a started
 * body's latency ends; which bodies start, end, and give out results is each side's own doing. By
 * induction, up to the first event after which they differ both have seen exactly the same events, and
 * that event is the one reported (with what ran on each side before it).
 *
 * Bodies never settle together: an asynchronous body takes at least one task, so two bodies end in the
 * same step only when one ends synchronously where it started (`sync`), which both sides see in the
 * same order.
 *
 * What the reference leaves out, and where each is pinned instead:
 * - `limit` / `createLimiter`: `test/properties/limits.test.ts`, `scheduling.test.ts`;
 * - `rateLimit`: `test/properties/rateLimits.test.ts`, `scheduling.test.ts`;
 * - `start: 'after-response'`: `test/properties/start.test.ts`;
 * - `maxPending` (its default, 1,000, never binds below 200 calls; `run()`'s pull limit is
 *   `maxPending + concurrency`): `test/properties/maxPending.test.ts` (its bound, exactly),
 *   `scheduling.test.ts`, `invariants.test.ts`, `test/maxPending.test.ts`;
 * - retries: `test/properties/retry.test.ts`, `scheduling.test.ts`; timeouts and `abortGraceMs` (here
 *   `Infinity`: a slot is freed when its body settles): `scheduling.test.ts`, `invariants.test.ts`;
 * - turns: calls here carry none, so the subscription is one turn and cancel-rest reaches every
 *   unfinished call. With several, an exclusive call cancelled with its turn is answered at once and
 *   is no barrier for the other turns' calls (it has finished; CallPool's rule 3), while the segments
 *   above would still hold them behind it: `scheduling.test.ts` (two turns), `test/turns.test.ts`;
 * - policies, approvals and start checks (calls here are allowed), intake errors (results that never
 *   take a slot), streamed outputs, unsubscribing and the run's signal: `invariants.test.ts`,
 *   `hostileInput.test.ts`.
 */
import fc from 'fast-check';
import { Subject, Subscription, type SchedulerLike } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type OnError, type ToolCall, type ToolResult } from '../../src/index.js';
import { referencePool, type ModelCall, type ModelOutcome } from '../support/poolReference.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

/** A call: its mode, its latency in tasks (if not `sync`), whether it fails, and whether it arrives with the previous one. */
const callSpec = fc.record({
  exclusive: fc.nat({ max: 3 }).map((n) => n === 3),
  sync: fc.nat({ max: 2 }).map((n) => n === 2),
  steps: fc.integer({ min: 1, max: 4 }),
  /** Fails when `roll` is among the run's top `failPercent` (so shrinking makes calls succeed). */
  roll: fc.nat({ max: 99 }),
  burst: fc.boolean(),
});
type CallSpec = (typeof callSpec extends fc.Arbitrary<infer T> ? T : never) & { readonly fails: boolean };

const callSpecs = fc
  .tuple(fc.oneof(fc.array(callSpec, { maxLength: 12 }), fc.array(callSpec, { maxLength: 200, size: 'max' })), fc.constantFrom(0, 1, 5, 20))
  .map(([specs, failPercent]): CallSpec[] => specs.map((spec) => ({ ...spec, fails: spec.roll >= 100 - failPercent })));

/**
 * The bodies' latencies, shared by both sides: a call's latency is `steps` scheduler tasks one after
 * the other, the first scheduled when either side first starts the call, so when both start it in the
 * same step (as they must) both wait for the very same tasks. Also numbers the steps: each task the
 * scheduler runs is one event.
 */
class Latencies {
  step = 0;
  readonly events: string[] = ['the run starts'];
  private readonly latencies = new Map<string, Promise<void>>();

  constructor(private readonly s: fc.Scheduler) {}

  of(id: string, steps: number): Promise<void> {
    let latency = this.latencies.get(id);
    if (latency === undefined) {
      latency = Promise.resolve();
      for (let k = 1; k <= steps; k++) latency = latency.then(() => this.task(`${id} step ${k}/${steps}`));
      this.latencies.set(id, latency);
    }
    return latency;
  }

  task(label: string): Promise<void> {
    return this.s.schedule(Promise.resolve(), label).then(() => void (this.events[this.step] = label));
  }

  /** Runs every task, one event at a time, each to quiescence (a macrotask turn drains every microtask). */
  async drive(): Promise<void> {
    await quiescence();
    while (this.s.count() > 0) {
      this.step++;
      await this.s.waitOne();
      await quiescence();
    }
  }
}

const quiescence = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What one side did, step by step. */
class Side {
  readonly log: { readonly step: number; readonly what: 'start' | 'end' | 'out' | 'done'; readonly id: string }[] = [];
  outcomes: (ModelOutcome | object)[] | undefined;
  constructor(private readonly latencies: Latencies) {}
  note(what: 'start' | 'end' | 'out' | 'done', id = ''): void {
    this.log.push({ step: this.latencies.step, what, id });
  }
  /** The reaction to event `step`: starts and results in order, ends as a set. */
  at(step: number): string {
    const of = (what: string) => this.log.filter((e) => e.step === step && e.what === what).map((e) => e.id);
    return `started [${of('start')}] ended [${of('end').sort()}] out [${of('out')}]${of('done').length > 0 ? ' done' : ''}`;
  }
  runningBefore(step: number): string[] {
    const running = new Set<string>();
    for (const e of this.log) if (e.step < step && e.what === 'start') running.add(e.id);
    for (const e of this.log) if (e.step < step && e.what === 'end') running.delete(e.id);
    return [...running];
  }
}

/** The body both sides run: logs its start and end, waits for the shared latency (or not, if `sync`), honours its signal. */
function body(side: Side, latencies: Latencies, specs: ReadonlyMap<string, CallSpec>) {
  return (id: string, signal: AbortSignal): unknown => {
    const spec = specs.get(id)!;
    side.note('start', id);
    if (spec.sync) {
      side.note('end', id);
      if (spec.fails) throw new Error(`${id} failed`);
      return id;
    }
    return new Promise<string>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      void latencies.of(id, spec.steps).then(() => {
        signal.removeEventListener('abort', onAbort);
        if (spec.fails) reject(new Error(`${id} failed`));
        else resolve(id);
      });
    }).finally(() => side.note('end', id));
  };
}

/** A scheduler whose timers never fire: with no time limits and an infinite grace, the pool arms none. */
function noTimers(): SchedulerLike & { armed: number } {
  return {
    armed: 0,
    now: () => 0,
    schedule() {
      this.armed++;
      return new Subscription();
    },
  };
}

/** A result as the reference would give it (any other error code stays, and differs from it). */
const outcome = (r: ToolResult): ModelOutcome | object => {
  const { id, index, status } = r;
  if (r.status === 'ok') return { id, index, status, value: r.value, started: r.started };
  if (r.error.code === 'cancelled') {
    const started = r.error.started === r.started ? r.started : `result says ${r.started}, its error ${r.error.started}`;
    return { id, index, status, code: 'cancelled', by: r.error.byCallId, started };
  }
  return { id, index, status, code: r.error.code, started: r.started };
};

type Entry = 'operator' | 'run';

interface Setup {
  readonly concurrency: number;
  readonly onError: OnError | undefined;
  readonly entry: Entry;
}

/** Runs `specs` through the pipeline and the reference side by side; returns both sides and the events. */
async function runBoth(s: fc.Scheduler, specs: readonly CallSpec[], { concurrency, onError, entry }: Setup) {
  const latencies = new Latencies(s);
  const byId = new Map(specs.map((spec, i) => [`c${i}`, spec]));
  const calls = specs.map((spec, i): ModelCall => ({ id: `c${i}`, index: i, exclusive: spec.exclusive }));
  const pool = new Side(latencies);
  const reference = new Side(latencies);

  const input = z.object({ id: z.string() });
  const execute = body(pool, latencies, byId);
  const timers = noTimers();
  const pipeline = createPipeline({
    tools: [
      defineTool({ name: 'par', description: 'a parallel call', input, mode: 'parallel', execute: ({ id }, ctx) => execute(id, ctx.signal) }),
      defineTool({ name: 'ex', description: 'an exclusive call', input, mode: 'exclusive', execute: ({ id }, ctx) => execute(id, ctx.signal) }),
    ],
    concurrency,
    ...(onError === undefined ? {} : { onError }),
    abortGraceMs: Infinity,
    defaultTimeoutMs: Infinity,
    scheduler: timers,
  });
  const toolCall = (call: ModelCall): ToolCall => ({ id: call.id, name: call.exclusive ? 'ex' : 'par', args: { id: call.id } });

  const cancelsRest = (call: ModelCall) => onError === 'cancel-rest' || (onError === undefined && call.exclusive);
  const referenceBody = body(reference, latencies, byId);
  const referenceCalls = new Subject<ModelCall>();
  referenceCalls.pipe(referencePool({ concurrency, cancelsRest }, (call, signal) => referenceBody(call.id, signal))).subscribe({
    next: (out) => {
      if (entry === 'operator') reference.note('out', `${out.id}:${out.status}`);
      (reference.outcomes ??= []).push(out);
    },
    complete: () => reference.note('done'),
  });

  // Each call arrives in a task of its own, with the calls of its burst (at once, as a model's chunk may
  // hold several); both sides get them in the same step.
  async function* arrivals(): AsyncGenerator<ModelCall[]> {
    for (let i = 0; i < calls.length; ) {
      const burst = [calls[i]!];
      while (specs[i + burst.length]?.burst === true) burst.push(calls[i + burst.length]!);
      await latencies.task(`${burst.map((call) => call.id)} arrive${burst.length > 1 ? '' : 's'}`);
      yield burst;
      i += burst.length;
    }
    await latencies.task('the source ends');
  }

  if (entry === 'operator') {
    const source = new Subject<ToolCall>();
    source.pipe(pipeline.operator()).subscribe({
      next: (r) => {
        pool.note('out', `${r.id}:${r.status}`);
        (pool.outcomes ??= []).push(outcome(r));
      },
      complete: () => pool.note('done'),
    });
    void (async () => {
      for await (const burst of arrivals()) for (const call of burst) referenceCalls.next(call), source.next(toolCall(call));
      referenceCalls.complete();
      source.complete();
    })();
  } else {
    // `run()` pulls the calls from an async iterable (one at a time): the reference is fed as each is pulled.
    async function* pulled(): AsyncGenerator<ToolCall> {
      for await (const burst of arrivals()) {
        for (const call of burst) {
          referenceCalls.next(call);
          yield toolCall(call);
        }
      }
      referenceCalls.complete();
    }
    void pipeline.run(pulled()).then((results) => {
      pool.note('done');
      pool.outcomes = results.map(outcome);
    });
  }
  await latencies.drive();
  return { pool, reference, events: latencies.events, steps: latencies.step, timers };
}

/** The first event after which the two sides reacted differently, described; undefined if none. */
function firstDivergence(pool: Side, reference: Side, events: readonly string[], steps: number): string | undefined {
  for (let step = 0; step <= steps; step++) {
    const [a, b] = [pool.at(step), reference.at(step)];
    if (a === b) continue;
    return [
      `after event ${step} (${events[step] ?? 'a task'}), with [${reference.runningBefore(step)}] running in the reference and [${pool.runningBefore(step)}] in the pool:`,
      `  pool      ${a}`,
      `  reference ${b}`,
    ].join('\n');
  }
  return undefined;
}

describe('the pool against the mental model: segments → concatMap(mergeMap(run, concurrency)) → model order', () => {
  it('after every event the same bodies started, ended and results given out, and the same outcomes, as the reference', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        callSpecs,
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom<OnError | undefined>('continue', 'cancel-rest', undefined),
        fc.constantFrom<Entry>('operator', 'run'),
        async (s, specs, concurrency, onError, entry) => {
          const { pool, reference, events, steps, timers } = await runBoth(s, specs, { concurrency, onError, entry });
          expect(firstDivergence(pool, reference, events, steps)).toBeUndefined();
          expect(reference.outcomes ?? []).toHaveLength(specs.length);
          expect(pool.outcomes ?? []).toEqual(reference.outcomes ?? []);
          expect(timers.armed).toBe(0);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
