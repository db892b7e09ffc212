/**
 * The pool's scheduling promises under random mixes (issue 24): limits, rate limits, retries,
 * barriers (exclusive calls), failures, timeouts and `maxPending`, in one or two pipelines sharing
 * their limiters. Time is virtual and keeps real time's order (see `virtualClock`), so "no wait past
 * its deadline" can be checked against the clock:
 * - every call is answered once, in order; no run deadlocks; nothing is left held or armed;
 * - no body runs past its attempt's time limit, and a started call waits for its next attempt (a token,
 *   a slot) no longer than its time limit after the delay, nor for its result after its last attempt;
 * - concurrency, barriers, the limit's `max`, the rate limit's window and `maxPending` hold.
 */
import fc from 'fast-check';
import { Subject, Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLimiter, createPipeline, createRateLimiter, defineTool, type AnyTool, type Limiter, type RateLimiter, type ToolCall, type ToolContext, type ToolResult } from '../../src/index.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

interface Timer {
  readonly due: number;
  readonly seq: number;
  readonly fire: () => void;
}

/**
 * A clock for the pipelines and the bodies: each timer is a fast-check task, but whichever of them runs
 * fires the earliest live timer (its own, among equally early ones) and moves the clock to it. So
 * timers keep real time's order, and fast-check decides where time passes between the other tasks
 * (arrivals) and the order of timers due at once.
 */
function virtualClock(s: fc.Scheduler) {
  let now = 0;
  let seq = 0;
  const live = new Set<Timer>();
  const fireEarliest = (own: Timer) => {
    let next: Timer | undefined;
    for (const timer of live) if (next === undefined || timer.due < next.due || (timer.due === next.due && timer.seq < next.seq)) next = timer;
    if (next === undefined) return; // a cancelled timer's task, after every live one fired
    if (live.has(own) && own.due === next.due) next = own;
    live.delete(next);
    now = Math.max(now, next.due);
    next.fire();
  };
  const scheduler: SchedulerLike = {
    now: () => now,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      const subscription = new Subscription(() => live.delete(timer));
      const timer: Timer = { due: now + delay, seq: seq++, fire: () => work.call(subscription as unknown as SchedulerAction<T>, state) };
      live.add(timer);
      void s.schedule(Promise.resolve(), `timer +${delay}ms`).then(() => fireEarliest(timer));
      return subscription;
    },
  };
  return { scheduler, now: () => now, active: () => live.size };
}

type Clock = ReturnType<typeof virtualClock>;

const OUTCOMES = ['ok', 'throw', 'hang'] as const;
const args = z.object({ key: z.string(), steps: z.number(), stepMs: z.number(), plan: z.array(z.enum(OUTCOMES)) });
type Args = z.output<typeof args>;

const toolSpecs = fc.array(
  fc.record({
    exclusive: fc.constantFrom(false, false, true),
    limited: fc.boolean(),
    rated: fc.boolean(),
    attempts: fc.integer({ min: 1, max: 3 }),
    timeoutMs: fc.constantFrom(5, 20, 60),
  }),
  { minLength: 1, maxLength: 4 },
);
type ToolSpec = (typeof toolSpecs extends fc.Arbitrary<infer T> ? T : never)[number];

/** A call: its tool (modulo the tools), how long each attempt takes, how each attempt ends (the last repeats). */
const callSpecs = fc.array(
  fc.record({
    tool: fc.nat({ max: 3 }),
    steps: fc.nat({ max: 3 }),
    stepMs: fc.constantFrom(0, 1, 4, 30),
    plan: fc.array(fc.constantFrom('ok', 'ok', 'throw', 'hang'), { minLength: 1, maxLength: 3 }),
    turn: fc.constantFrom('t0', 't1'),
    burst: fc.boolean(),
  }),
  { maxLength: 10 },
);
type CallSpec = (typeof callSpecs extends fc.Arbitrary<infer T> ? T : never)[number];

/** What one pipeline's run saw: its bodies, its results as they were built, and what broke a promise. */
class Watch {
  readonly running = new Set<string>();
  exclusiveRunning = false;
  maxRunning = 0;
  /** Each call's body starts and ends (the clock), by call id. */
  readonly starts = new Map<string, number[]>();
  readonly ends = new Map<string, number[]>();
  /** When each call was answered (before the reorder buffer), by call id; answered twice is a violation. */
  readonly answeredAt = new Map<string, number>();
  /** The lowest index not yet answered, and those answered above it: what `maxPending` bounds. */
  lowestOpen = 0;
  readonly ahead = new Set<number>();
  readonly violations: string[] = [];
  readonly results: ToolResult[] = [];
  done = false;

  constructor(readonly maxPending: number) {}

  enter(key: string, index: number, exclusive: boolean, now: number): void {
    const starts = this.starts.get(key) ?? [];
    if (this.answeredAt.has(key)) this.violations.push(`${key} started after its result`);
    if (this.exclusiveRunning) this.violations.push(`${key} started while an exclusive call ran`);
    if (exclusive && this.running.size > 0) this.violations.push(`exclusive ${key} started beside ${[...this.running]}`);
    // maxPending: a first start while that many results wait behind the straggler is the straggler's,
    // or one in an idle pool (so no body runs).
    if (starts.length === 0 && this.ahead.size >= this.maxPending && index !== this.lowestOpen && this.running.size > 0) {
      this.violations.push(`${key} started while ${this.ahead.size} results waited behind c${this.lowestOpen} and ${[...this.running]} ran`);
    }
    this.starts.set(key, [...starts, now]);
    this.running.add(key);
    if (exclusive) this.exclusiveRunning = true;
    this.maxRunning = Math.max(this.maxRunning, this.running.size);
  }

  exit(key: string, exclusive: boolean, now: number): void {
    this.running.delete(key);
    if (exclusive) this.exclusiveRunning = false;
    this.ends.set(key, [...(this.ends.get(key) ?? []), now]);
  }

  answered(result: ToolResult, now: number): void {
    if (this.answeredAt.has(result.id)) this.violations.push(`${result.id} answered twice`);
    this.answeredAt.set(result.id, now);
    if (result.index !== this.lowestOpen) return void this.ahead.add(result.index);
    this.lowestOpen++;
    while (this.ahead.delete(this.lowestOpen)) this.lowestOpen++;
  }
}

/** Bodies running at once of the limited tools, and starts of the rate-limited ones, in every pipeline. */
class Shared {
  limitedRunning = 0;
  limitedMax = 0;
  readonly ratedStarts: number[] = [];
}

/** A time step of a body: a timer of the clock, cancelled (and rejected) when the signal aborts. */
function step(clock: Clock, signal: AbortSignal, ms: number | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = ms === undefined ? undefined : clock.scheduler.schedule(() => done(resolve), ms);
    const onAbort = () => done(() => reject(signal.reason));
    const done = (settle: () => void) => {
      timer?.unsubscribe();
      signal.removeEventListener('abort', onAbort);
      settle();
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function tools(specs: readonly ToolSpec[], clock: Clock, watch: Watch, shared: Shared, limiter: Limiter, rateLimiter: RateLimiter): AnyTool[] {
  return specs.map((spec, t) => {
    const body = async ({ key, steps, stepMs, plan }: Args, ctx: ToolContext): Promise<string> => {
      const attempt = (watch.starts.get(key)?.length ?? 0) + 1;
      watch.enter(key, Number(key.slice(1)), spec.exclusive, clock.now());
      if (spec.limited) shared.limitedMax = Math.max(shared.limitedMax, ++shared.limitedRunning);
      if (spec.rated) shared.ratedStarts.push(clock.now());
      try {
        for (let i = 0; i < steps; i++) await step(clock, ctx.signal, stepMs);
        const outcome = plan[Math.min(attempt, plan.length) - 1]!;
        if (outcome === 'hang') await step(clock, ctx.signal, undefined);
        if (outcome === 'throw') throw new Error(`${key} attempt ${attempt} failed`);
        return key;
      } finally {
        if (spec.limited) shared.limitedRunning--;
        watch.exit(key, spec.exclusive, clock.now());
      }
    };
    return defineTool({
      name: `tool${t}`,
      description: `tool ${t}`,
      input: args,
      mode: spec.exclusive ? 'exclusive' : 'parallel',
      timeoutMs: spec.timeoutMs,
      ...(spec.attempts > 1 ? { idempotent: true, retry: { attempts: spec.attempts, backoff: { initialMs: 3, factor: 3, maxMs: 20 } } } : {}),
      ...(spec.limited ? { limit: limiter } : {}),
      ...(spec.rated ? { rateLimit: rateLimiter } : {}),
      execute: body,
    });
  });
}

/**
 * A started call never waits past its deadline: each attempt ends within the tool's `timeoutMs`; the
 * next starts after the delay (never before) and at most `timeoutMs` after it (its wait for a token,
 * or for a slot, has the call's time limit); and the result comes at the end of the last attempt, or —
 * if it was to be retried — at most the delay and `timeoutMs` later.
 */
function expectDeadlinesKept(watch: Watch, result: ToolResult, timeoutMs: number): void {
  const starts = watch.starts.get(result.id) ?? [];
  const ends = watch.ends.get(result.id) ?? [];
  expect(result.attempts).toBe(starts.length);
  expect(ends.length).toBe(starts.length);
  if (starts.length === 0) return;
  const delays = new Map<number, number>();
  for (const entry of result.trace) if (entry.stage === 'execute' && entry.event === 'attempt_failed') delays.set(entry.attempt, entry.delayMs);
  for (const [k, start] of starts.entries()) {
    expect(ends[k]! - start, `${result.id} attempt ${k + 1} ran`).toBeLessThanOrEqual(timeoutMs);
    if (k === 0) continue;
    const ready = ends[k - 1]! + delays.get(k)!;
    expect(start, `${result.id} attempt ${k + 1} started`).toBeGreaterThanOrEqual(ready);
    expect(start - ready, `${result.id} waited for attempt ${k + 1}`).toBeLessThanOrEqual(timeoutMs);
  }
  const last = starts.length;
  const retried = delays.get(last);
  const latest = ends[last - 1]! + (retried === undefined ? 0 : retried + timeoutMs);
  expect(watch.answeredAt.get(result.id)!, `${result.id} answered`).toBeLessThanOrEqual(latest);
}

/** Feeds the calls, each an arrival of its own unless part of a burst with the previous one. */
async function feed(s: fc.Scheduler, tag: string, specs: readonly CallSpec[], toolCount: number, calls: Subject<ToolCall>): Promise<void> {
  for (const [i, spec] of specs.entries()) {
    if (!spec.burst) await s.schedule(Promise.resolve(), `${tag} arrival ${i}`);
    const { steps, stepMs, plan, turn } = spec;
    calls.next({ id: `c${i}`, name: `tool${spec.tool % toolCount}`, args: { key: `c${i}`, steps, stepMs, plan }, turn });
  }
  await s.schedule(Promise.resolve(), `${tag} source completes`);
  calls.complete();
}

describe('scheduling under random limits, rate limits, retries, barriers, failures, timeouts and maxPending', () => {
  it('every call answered once; no deadlock; no wait past its deadline; concurrency, barriers, limit, rate window and maxPending held; nothing left', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        toolSpecs,
        fc.array(callSpecs, { minLength: 1, maxLength: 2 }),
        fc.record({
          limitMax: fc.integer({ min: 1, max: 2 }),
          rateMax: fc.integer({ min: 1, max: 2 }),
          perMs: fc.constantFrom(1, 10, 50),
          concurrency: fc.integer({ min: 1, max: 4 }),
          maxPending: fc.integer({ min: 1, max: 4 }),
          onError: fc.constantFrom('cancel-rest' as const, 'continue' as const),
        }),
        async (s, toolSpecList, pipelineCalls, { limitMax, rateMax, perMs, concurrency, maxPending, onError }) => {
          const clock = virtualClock(s);
          const limiter = createLimiter({ max: limitMax });
          const rateLimiter = createRateLimiter({ max: rateMax, perMs });
          const shared = new Shared();
          const runs = pipelineCalls.map((specs, p) => {
            const watch = new Watch(maxPending);
            const pipeline = createPipeline({
              tools: tools(toolSpecList, clock, watch, shared, limiter, rateLimiter),
              scheduler: clock.scheduler,
              concurrency,
              maxPending,
              onError,
              abortGraceMs: Infinity, // a slot is freed only when its body settled: bounds hold exactly
              observers: [(result) => watch.answered(result, clock.now())],
            });
            const calls = new Subject<ToolCall>();
            calls.pipe(pipeline.operator()).subscribe({ next: (r) => watch.results.push(r), complete: () => (watch.done = true) });
            void feed(s, `p${p}`, specs, toolSpecList.length, calls);
            return { watch, specs };
          });
          await s.waitIdle();

          for (const { watch, specs } of runs) {
            expect(watch.done).toBe(true); // no deadlock
            expect(watch.violations).toEqual([]);
            expect(watch.results.map((r) => r.index)).toEqual(specs.map((_, i) => i));
            expect(watch.maxRunning).toBeLessThanOrEqual(concurrency);
            for (const [i, result] of watch.results.entries()) expectDeadlinesKept(watch, result, toolSpecList[specs[i]!.tool % toolSpecList.length]!.timeoutMs);
          }
          expect(shared.limitedMax).toBeLessThanOrEqual(limitMax);
          // Any `rateMax + 1` consecutive starts of the rate-limited tools span at least perMs.
          const starts = shared.ratedStarts;
          for (let i = 0; i + rateMax < starts.length; i++) expect(starts[i + rateMax]! - starts[i]!).toBeGreaterThanOrEqual(perMs);
          expect(clock.active()).toBe(0);
          expect(limiter.active()).toBe(0);
          expect(limiter.waiting()).toBe(0);
          expect(rateLimiter.waiting()).toBe(0);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
