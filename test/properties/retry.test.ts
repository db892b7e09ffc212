import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type AnyTool, type ToolCall, type ToolResult } from '../../src/index.js';
import { schedulerTimers } from '../support/monitor.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

/** What each attempt of a call does, in order (the last repeats): settle ok, throw, throw a transient error, or hang until aborted. */
const STEPS = ['ok', 'throw', 'transient', 'hang'] as const;
type Step = (typeof STEPS)[number];
const TOOLS = { idem: 3, picky: 4, plain: 1, ex: 2 } as const;
type Name = keyof typeof TOOLS;

interface Log {
  /** Body starts per call id, with whether the call's result was out already (or the run aborted). */
  starts: Map<string, number>;
  late: string[];
  /** What each failed attempt threw, per call id. */
  failures: Map<string, Step[]>;
  resulted: Set<string>;
  aborted: boolean;
}

function tools(s: fc.Scheduler, log: Log): AnyTool[] {
  const input = z.object({ plan: z.array(z.enum(STEPS)) });
  const body = (name: Name) => async ({ plan }: { plan: Step[] }, ctx: { callId: string; signal: AbortSignal }) => {
    const n = (log.starts.get(ctx.callId) ?? 0) + 1;
    log.starts.set(ctx.callId, n);
    if (log.resulted.has(ctx.callId) || log.aborted) log.late.push(`${name} ${ctx.callId} attempt ${n}`);
    const step = plan[Math.min(n, plan.length) - 1]!;
    const fail = (why: Step) => {
      log.failures.set(ctx.callId, [...(log.failures.get(ctx.callId) ?? []), why]);
      return new Error(why);
    };
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(fail('hang'));
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      if (step === 'hang') return;
      void s.schedule(Promise.resolve(), `${ctx.callId} attempt ${n}`).then(() => {
        ctx.signal.removeEventListener('abort', onAbort);
        if (step === 'ok') resolve();
        else reject(fail(step));
      });
    });
    return n;
  };
  const backoff = { initialMs: 10, factor: 2, maxMs: 40, jitter: 0.5 };
  return [
    defineTool({ name: 'idem', description: '', input, mode: 'parallel', idempotent: true, timeoutMs: 50, retry: { attempts: TOOLS.idem, backoff }, execute: body('idem') }),
    defineTool({
      name: 'picky',
      description: '',
      input,
      mode: 'parallel',
      timeoutMs: 50,
      retry: { attempts: TOOLS.picky, backoff, retryOn: (e) => e.code === 'tool_error' && (e.cause as Error).message === 'transient' },
      execute: body('picky'),
    }),
    defineTool({ name: 'plain', description: '', input, mode: 'parallel', timeoutMs: 50, execute: body('plain') }),
    defineTool({ name: 'ex', description: '', input, mode: 'exclusive', idempotent: true, timeoutMs: 50, retry: { attempts: TOOLS.ex, backoff }, execute: body('ex') }),
  ];
}

const specs = fc.array(
  fc.record({ name: fc.constantFrom<Name>('idem', 'picky', 'plain', 'ex'), plan: fc.array(fc.constantFrom(...STEPS), { minLength: 1, maxLength: 4 }), turn: fc.constantFrom('t0', 't1') }),
  { maxLength: 8 },
);

describe('retry under random latencies, failures, timeouts, cancel-rest and aborts', () => {
  it('retries only where allowed, never after cancel, attempts ≤ attempts; one result per call in order; no timers left', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        specs,
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom('cancel-rest' as const, 'continue' as const),
        fc.option(fc.nat({ max: 12 }), { nil: undefined }),
        async (s, calls, concurrency, onError, abortAfter) => {
          const log: Log = { starts: new Map(), late: [], failures: new Map(), resulted: new Set(), aborted: false };
          const timers = schedulerTimers(s);
          const controller = new AbortController();
          const pipeline = createPipeline({ tools: tools(s, log), scheduler: timers, concurrency, onError, abortGraceMs: 0 });
          const source = new Subject<ToolCall>();
          const results: ToolResult[] = [];
          const done = new Promise<void>((resolve, reject) =>
            source.pipe(pipeline.operator({ signal: controller.signal })).subscribe({
              next: (r) => {
                results.push(r);
                log.resulted.add(r.id);
              },
              error: reject,
              complete: resolve,
            }),
          );
          void (async () => {
            for (const [i, spec] of calls.entries()) {
              await s.schedule(Promise.resolve(), `arrival ${i}`);
              source.next({ id: `c${i}`, name: spec.name, args: { plan: spec.plan }, turn: spec.turn });
            }
            await s.schedule(Promise.resolve(), 'source completes');
            source.complete();
          })();
          if (abortAfter !== undefined) {
            void (async () => {
              for (let i = 0; i < abortAfter; i++) await s.schedule(Promise.resolve(), `abort in ${abortAfter - i}`);
              log.aborted = true;
              controller.abort();
            })();
          }
          await s.waitFor(done);
          await s.waitAll();

          // In order, once each; an abort may end the run before later calls arrive.
          expect(results.map((r) => r.index)).toEqual(results.map((_, i) => i));
          if (abortAfter === undefined) expect(results.length).toBe(calls.length);
          expect(log.late).toEqual([]); // no attempt after the call's result or the run's abort
          for (const [i, result] of results.entries()) {
            const { name } = calls[i]!;
            const starts = log.starts.get(result.id) ?? 0;
            expect(result.attempts).toBe(starts);
            expect(result.attempts).toBeLessThanOrEqual(TOOLS[name]);
            const failures = log.failures.get(result.id) ?? [];
            // Every attempt but the last failed; only picky's transient failures (or any of idem/ex) led to another.
            expect(failures.length).toBeGreaterThanOrEqual(starts - 1);
            if (name === 'picky') expect(failures.slice(0, starts - 1).every((f) => f === 'transient')).toBe(true);
            const traced = result.trace.filter((e) => e.stage === 'execute');
            // One entry per failed attempt that was to be retried: one more than the retries when the
            // call was cancelled during the delay.
            const retried = result.status === 'cancelled' && traced.length === starts ? starts : Math.max(starts - 1, 0);
            expect(traced.map((e) => e.event === 'attempt_failed' && e.attempt)).toEqual(Array.from({ length: retried }, (_, k) => k + 1));
          }
          expect(timers.active()).toBe(0);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
