/**
 * `maxPending`'s bound, pinned: for random streams of parallel and exclusive calls — random body
 * latencies (some synchronous), failures, `onError` `continue` and `cancel-rest`, arrivals in bursts
 * or apart, and post-execute policies that take random time (so results are on their way from the pool
 * to the reorder buffer for a while) — at no time do more than `maxPending + concurrency - 1` calls whose
 * body started wait ahead of the earliest result not yet given out (running, or finished and held for
 * model order); when nothing after the pool takes time, no more than `maxPending + concurrency - 2`.
 * (See `ReorderWindow` for why these numbers, and why they are reached.)
 *
 * Observed from outside, where it matters: a call holds memory from its body's start to its result's
 * delivery, and the count only grows when a body starts, so it is checked at every start. Calls arrive
 * in model order and have no limits, so the earliest call not yet out can always start when its turn
 * comes — the condition under which the bound is promised (the pool starts a call when nothing runs,
 * to avoid a deadlock, only when that call cannot).
 *
 * It failed before issue 25's S12: the pool counted a result as given out the moment it left the pool,
 * so while a slow post chain held the earliest result, every call behind it could start.
 */
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type OnError, type PostPolicy, type ToolCall } from '../../src/index.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

/** A call: exclusive or not, its body's latency in scheduler tasks (0: it returns at once), whether it fails, its post chain's latency, and whether it arrives with the previous one. */
const callSpec = fc.record({
  exclusive: fc.nat({ max: 4 }).map((n) => n === 4),
  steps: fc.nat({ max: 3 }),
  fails: fc.nat({ max: 9 }).map((n) => n === 9),
  postSteps: fc.nat({ max: 3 }),
  burst: fc.boolean(),
});
type CallSpec = typeof callSpec extends fc.Arbitrary<infer T> ? T : never;

const runSpec = fc.record({
  calls: fc.oneof(fc.array(callSpec, { minLength: 1, maxLength: 12 }), fc.array(callSpec, { minLength: 1, maxLength: 60, size: 'max' })),
  concurrency: fc.integer({ min: 1, max: 4 }),
  maxPending: fc.integer({ min: 1, max: 4 }),
  onError: fc.constantFrom<OnError>('continue', 'cancel-rest'),
  /** Whether post policies take time at all (else every post chain answers at once). */
  slowPost: fc.boolean(),
});

/** Calls started and not yet given out, ahead of the earliest one not yet given out: the most seen at a start. */
class Held {
  /** Indices whose body started and whose result is not out yet. */
  private readonly started = new Set<number>();
  /** Results given out so far: they come in model order, so this is the earliest index not out. */
  private out = 0;
  most = 0;
  readonly violations: string[] = [];

  constructor(private readonly bound: number) {}

  start(index: number): void {
    this.started.add(index);
    const ahead = this.started.size - (this.started.has(this.out) ? 1 : 0);
    this.most = Math.max(this.most, ahead);
    if (ahead > this.bound) this.violations.push(`c${index} started with ${ahead} calls held ahead of c${this.out} (bound ${this.bound}): ${[...this.started].sort((a, b) => a - b)}`);
  }

  givenOut(index: number): void {
    this.started.delete(index);
    this.out = index + 1;
  }
}

async function runOnce(s: fc.Scheduler, spec: (typeof runSpec extends fc.Arbitrary<infer T> ? T : never)): Promise<Held> {
  const { calls: specs, concurrency, maxPending, onError, slowPost } = spec;
  const held = new Held(maxPending + concurrency - (slowPost ? 1 : 2));
  const body = async ({ i }: { i: number }) => {
    held.start(i);
    const { steps, fails } = specs[i]!;
    for (let k = 0; k < steps; k++) await s.schedule(Promise.resolve(), `c${i} step ${k + 1}`);
    if (fails) throw new Error(`c${i} failed`);
    return i;
  };
  const input = z.object({ i: z.number() });
  const tools = [
    defineTool({ name: 'p', description: 'p', input, mode: 'parallel', execute: body }),
    defineTool({ name: 'x', description: 'x', input, mode: 'exclusive', execute: body }),
  ];
  // The post chain: a result stays on its way from the pool to the reorder for `postSteps` tasks.
  const slow: PostPolicy = (ctx) => {
    const steps = slowPost ? specs[ctx.index]!.postSteps : 0;
    if (steps === 0) return undefined;
    return (async () => {
      for (let k = 0; k < steps; k++) await s.schedule(Promise.resolve(), `c${ctx.index} post ${k + 1}`);
      return undefined;
    })();
  };
  const pipeline = createPipeline({ tools, concurrency, maxPending, onError, post: [slow], defaultTimeoutMs: Infinity });
  const calls = new Subject<ToolCall>();
  const done = new Promise<void>((resolve, reject) =>
    calls.pipe(pipeline.operator()).subscribe({ next: (result) => held.givenOut(result.index), error: reject, complete: resolve }),
  );
  void (async () => {
    for (const [i, call] of specs.entries()) {
      if (!call.burst) await s.schedule(Promise.resolve(), `c${i} arrives`);
      calls.next({ id: `c${i}`, name: call.exclusive ? 'x' : 'p', args: { i } });
    }
    await s.schedule(Promise.resolve(), 'the source completes');
    calls.complete();
  })();
  await s.waitFor(done);
  await s.waitAll();
  return held;
}

describe('maxPending bounds the calls held behind the earliest result not yet out', () => {
  it('never more than maxPending + concurrency - 1 (- 2 when nothing after the pool takes time), however slow the post chain', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), runSpec, async (s, spec) => {
        const held = await runOnce(s, spec);
        expect(held.violations).toEqual([]);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('the bound is reached: a straggler, results slow on their way, and every slot busy', async () => {
    // One long straggler, then quick calls whose post chains are slow: maxPending 2, concurrency 3 → 4 held.
    let most = 0;
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const calls: CallSpec[] = [{ exclusive: false, steps: 3, fails: false, postSteps: 3, burst: false }];
        for (let i = 0; i < 8; i++) calls.push({ exclusive: false, steps: 1, fails: false, postSteps: 3, burst: true });
        const held = await runOnce(s, { calls, concurrency: 3, maxPending: 2, onError: 'continue', slowPost: true });
        expect(held.violations).toEqual([]);
        most = Math.max(most, held.most);
      }),
      { numRuns: 200 },
    );
    expect(most).toBe(2 + 3 - 1);
  });
});
