import fc from 'fast-check';
import { Subject, Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { z } from 'zod';
import { expect } from 'vitest';
import { createPipeline, defineTool, type AnyTool, type Approver, type Limiter, type OnError, type PrePolicy, type RateLimiter, type ToolCall, type ToolContext, type ToolResult } from '../../src/index.js';
import { checkInvariants, type MonitorEntry } from '../../src/testing/index.js';

/**
 * Watches tool bodies: who runs, overlaps, starts, and which signals aborted; `log` is every start and
 * end in order, as `invariantMonitor()` of toolstream/testing writes it, for `checkInvariants`.
 */
export class BodyMonitor {
  readonly running = new Set<string>();
  readonly started = new Set<string>();
  readonly signals = new Map<string, AbortSignal>();
  readonly violations: string[] = [];
  readonly log: MonitorEntry[] = [];
  readonly #entries = new Map<string, Omit<MonitorEntry, 'type'>>();
  maxRunning = 0;
  exclusiveRunning = false;
  /** Set when the test unsubscribed: no body may start after it. */
  closed = false;

  enter(key: string, exclusive: boolean, ctx: ToolContext, name = key): void {
    if (this.closed) this.violations.push(`${key} started after unsubscribe`);
    if (this.exclusiveRunning) this.violations.push(`${key} started while an exclusive call ran`);
    if (exclusive && this.running.size > 0) this.violations.push(`exclusive ${key} started beside ${[...this.running]}`);
    this.running.add(key);
    this.started.add(key);
    this.signals.set(key, ctx.signal);
    if (exclusive) this.exclusiveRunning = true;
    this.maxRunning = Math.max(this.maxRunning, this.running.size);
    const entry = { index: ctx.index, id: ctx.callId, name, exclusive };
    this.#entries.set(key, entry);
    this.log.push({ type: 'start', ...entry });
  }

  exit(key: string, exclusive: boolean): void {
    this.running.delete(key);
    if (exclusive) this.exclusiveRunning = false;
    const entry = this.#entries.get(key);
    if (entry !== undefined) this.log.push({ type: 'end', ...entry });
  }
}

/** Counts the bodies of a group of tools running at once (in any pipeline): what a shared limit caps. */
export class GroupMonitor {
  running = 0;
  max = 0;
  /** When each body started, by `clock` (what a rate limit caps). */
  readonly starts: number[] = [];
  constructor(private readonly clock: () => number = () => 0) {}
  enter(): void {
    this.max = Math.max(this.max, ++this.running);
    this.starts.push(this.clock());
  }
  exit(): void {
    this.running--;
  }
}

/** Scheduling options for `monitoredTools`: a limiter and/or rate limiter for some tools, watched by a group monitor. */
export interface MonitoredLimits {
  readonly limiter?: Limiter;
  readonly rateLimiter?: RateLimiter;
  readonly tools: readonly ('par' | 'ex' | 'slow')[];
  readonly group: GroupMonitor;
}

/** Timers this long (less a millisecond) never fire under `schedulerTimers`. */
export const NEVER_MS = 1_000_000_000;

/** A timer scheduler whose timers fire when fast-check's scheduler says so; counts live timers. */
export function schedulerTimers(s: fc.Scheduler): SchedulerLike & { readonly active: () => number } {
  let active = 0;
  return {
    now: () => 0,
    active: () => active,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      let live = true;
      active++;
      const subscription = new Subscription(() => {
        if (live) active--;
        live = false;
      });
      // A delay this long stands for "never within this test": counted and cancellable, never fired. A
      // hair shorter counts too: a deadline of NEVER_MS set on a clock that has moved on by a hair since
      // (the invariants tests' clock moves 1e-9 ms at each reading) is due in 999999999.999999 ms.
      if (delay >= NEVER_MS - 1) return subscription;
      void s.schedule(Promise.resolve(), `timer ${delay}ms`).then(() => {
        if (!live) return;
        live = false;
        active--;
        work.call(subscription as unknown as SchedulerAction<T>, state);
      });
      return subscription;
    },
  };
}

/**
 * Like `schedulerTimers`, with a clock: a timer that fires moves `now` to (at least) the time it was
 * due, so rate limits see time pass while fast-check decides the order of everything else.
 */
export function clockedTimers(s: fc.Scheduler): SchedulerLike & { readonly active: () => number } {
  let clock = 0;
  const timers = schedulerTimers(s);
  return {
    now: () => clock,
    active: timers.active,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      const due = clock + delay;
      return timers.schedule(function (this: SchedulerAction<T>, value?: T) {
        clock = Math.max(clock, due);
        work.call(this, value);
      }, delay, state);
    },
  };
}

export const OUTCOMES = ['ok', 'throw', 'sync', 'syncThrow', 'stream', 'hang'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * What the gate policy and approver do with a call (see `gatePolicy`); `start-*` calls are allowed
 * with a start check that, a scheduler tick later, lets the body start or denies it.
 */
export const GATES = ['allow', 'deny', 'ask-yes', 'ask-no', 'start-allow', 'start-deny'] as const;

/** Whether a call of this gate may reach its body. */
export const admits = (gate: (typeof GATES)[number]): boolean => gate === 'allow' || gate === 'ask-yes' || gate === 'start-allow';

export const callSpec = z.object({
  key: z.string(),
  steps: z.number().int().min(0),
  outcome: z.enum(OUTCOMES),
  gate: z.enum(GATES).default('allow'),
});

/** A pre-execute policy deciding by the call's `gate`, after a few scheduler ticks. */
export function gatePolicy(s: fc.Scheduler): PrePolicy {
  return async function gate(ctx) {
    const { key, gate } = ctx.args as z.output<typeof callSpec>;
    await s.schedule(Promise.resolve(), `${key} policy`);
    if (gate === 'start-allow' || gate === 'start-deny') {
      ctx.beforeStart(async () => {
        await s.schedule(Promise.resolve(), `${key} start check`);
        return gate === 'start-deny' ? { decision: 'deny', reason: 'changed while waiting' } : undefined;
      });
      return { decision: 'allow' };
    }
    return { decision: gate === 'allow' ? 'allow' : gate === 'deny' ? 'deny' : 'ask' };
  };
}

/** An approver answering by the call's `gate`, after a scheduler tick; counts the questions. */
export function gateApprover(s: fc.Scheduler, asked: string[]): Approver {
  return async (request) => {
    const { key, gate } = request.args as z.output<typeof callSpec>;
    asked.push(key);
    await s.schedule(Promise.resolve(), `${key} approval`);
    return gate === 'ask-yes' ? 'allowed-once' : 'rejected';
  };
}

/**
 * Tools `par` (parallel), `ex` (exclusive) and `slow` (parallel, with a timeout that fires whenever
 * the scheduler decides). Each body awaits `steps` scheduler ticks, honouring its signal at each.
 */
export function monitoredTools(s: fc.Scheduler, monitor: BodyMonitor, limits?: MonitoredLimits): AnyTool[] {
  const tick = (signal: AbortSignal, label: string) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      void s.schedule(Promise.resolve(), label).then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });

  const body = (name: string, exclusive: boolean, group?: GroupMonitor) => (args: z.output<typeof callSpec>, ctx: ToolContext) => {
    const { key, steps, outcome } = args;
    monitor.enter(key, exclusive, ctx, name);
    group?.enter();
    const leave = () => {
      group?.exit();
      monitor.exit(key, exclusive);
    };
    if (outcome === 'sync' || outcome === 'syncThrow') {
      leave();
      if (outcome === 'syncThrow') throw new Error(`${key} threw`);
      return key;
    }
    if (outcome === 'stream') {
      return (async function* () {
        try {
          for (let i = 0; i < steps; i++) {
            await tick(ctx.signal, `${key} item ${i}`);
            yield `${key}:${i}`;
          }
        } finally {
          leave();
        }
      })();
    }
    return (async () => {
      try {
        const ticks = outcome === 'hang' ? steps + 50 : steps;
        for (let i = 0; i < ticks; i++) await tick(ctx.signal, `${key} step ${i}`);
        if (outcome === 'throw') throw new Error(`${key} failed`);
        return key;
      } finally {
        leave();
      }
    })();
  };

  const tool = (name: string, mode: 'parallel' | 'exclusive', timeoutMs?: number) =>
    defineTool({
      name,
      description: name,
      input: callSpec,
      mode,
      ...(timeoutMs ? { timeoutMs } : {}),
      ...(limits?.limiter !== undefined && limits.tools.includes(name as 'par') ? { limit: limits.limiter } : {}),
      ...(limits?.rateLimiter !== undefined && limits.tools.includes(name as 'par') ? { rateLimit: limits.rateLimiter } : {}),
      execute: body(name, mode === 'exclusive', limits?.tools.includes(name as 'par') ? limits.group : undefined),
    });
  return [tool('par', 'parallel'), tool('ex', 'exclusive'), tool('slow', 'parallel', 5)];
}

/** A random batch: which tool, how long, how it ends, and whether it arrives in a burst with the previous one. */
export const callSpecs = fc.array(
  fc.record({
    name: fc.constantFrom('par', 'par', 'ex', 'slow'),
    steps: fc.nat({ max: 4 }),
    outcome: fc.constantFrom<Outcome>('ok', 'ok', 'ok', 'sync', 'stream', 'throw', 'syncThrow', 'hang'),
    burst: fc.boolean(),
    argsAsJson: fc.boolean(),
    gate: fc.constantFrom(...GATES),
  }),
  { maxLength: 14 },
);

/** One call of `callSpecs`. */
export type CallSpec = (typeof callSpecs extends fc.Arbitrary<infer T> ? T : never)[number];

/**
 * Feeds one pipeline's calls, each arrival a scheduler task unless part of a burst; calls alternate two
 * turns. Each call is pushed to `sent` as it is fed.
 */
export async function feedCalls(s: fc.Scheduler, tag: string, specs: readonly CallSpec[], calls: Subject<ToolCall>, sent: ToolCall[] = []): Promise<void> {
  for (const [i, spec] of specs.entries()) {
    if (!spec.burst) await s.schedule(Promise.resolve(), `${tag} arrival ${i}`);
    const args = { key: `${tag}${i}`, steps: spec.steps, outcome: spec.outcome };
    const call = { id: `c${i}`, name: spec.name, args, turn: `t${i % 2}` };
    sent.push(call);
    calls.next(call);
  }
  await s.schedule(Promise.resolve(), `${tag} source completes`);
  calls.complete();
}

/**
 * Runs `specs` through a pipeline of monitored tools on the scheduler `s` drives, with slots freed only by
 * bodies settling (`abortGraceMs: Infinity`) and no default time limits, so the invariants hold exactly;
 * `done` resolves when its results are all out. Several such runs may share a limiter (one per tag).
 */
export function runMonitored(
  s: fc.Scheduler,
  tag: string,
  specs: readonly CallSpec[],
  options: { readonly tools: (monitor: BodyMonitor) => AnyTool[]; readonly scheduler: SchedulerLike; readonly concurrency: number; readonly onError: OnError },
) {
  const monitor = new BodyMonitor();
  const { scheduler, concurrency, onError } = options;
  const tools = options.tools(monitor);
  const pipeline = createPipeline({ tools, abortGraceMs: Infinity, defaultTimeoutMs: Infinity, scheduler, concurrency, onError });
  const source = new Subject<ToolCall>();
  const calls: ToolCall[] = [];
  const results: ToolResult[] = [];
  const done = new Promise<void>((resolve, reject) => source.pipe(pipeline.operator()).subscribe({ next: (r) => results.push(r), error: reject, complete: resolve }));
  void feedCalls(s, tag, specs, source, calls);
  return { monitor, calls, results, done, specs, tools, concurrency };
}

/**
 * What every run must show (toolstream/testing's `checkInvariants`, on the bodies' own log): one result
 * per call in order, never more than `concurrency` bodies, exclusive calls alone, only admitted calls run.
 */
export function expectRunInvariants(run: ReturnType<typeof runMonitored>): void {
  expect(run.results.length).toBe(run.specs.length);
  expect(checkInvariants({ calls: run.calls, results: run.results, log: run.monitor.log, tools: run.tools, concurrency: run.concurrency })).toEqual({ ok: true });
}
