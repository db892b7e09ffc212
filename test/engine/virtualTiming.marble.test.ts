import { asapScheduler, map, mergeMap, tap, throwError, timer, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type PipelineEvent, type ToolCall, type ToolDefinition, type ToolTiming } from '../../src/index.js';

// Bodies are virtual-time Observables: `frames` long, reporting progress `progressAt` frames in when
// asked, and failing their first attempt after `failFirst` frames when asked.
const input = z.object({ frames: z.number(), progressAt: z.number().optional(), failFirst: z.number().optional() });
type Facts = Pick<ToolDefinition<typeof input>, 'limit' | 'rateLimit' | 'retry' | 'idempotent' | 'timeoutMs'>;
const sleeper = (name: string, facts: Facts = {}) => {
  const tried = new Set<string>();
  return defineTool({
    name,
    description: name,
    input,
    mode: 'parallel',
    ...facts,
    execute: ({ frames, progressAt, failFirst }, ctx) => {
      if (failFirst !== undefined && !tried.has(ctx.callId)) {
        tried.add(ctx.callId);
        return timer(failFirst).pipe(mergeMap(() => throwError(() => new Error('flaky'))));
      }
      const reported = progressAt === undefined ? timer(0) : timer(progressAt).pipe(tap(() => ctx.progress('half')));
      return reported.pipe(mergeMap(() => timer(frames - (progressAt ?? 0))), map(() => 'done'));
    },
  });
};
const call = (id: string, name: string, args: z.input<typeof input>): ToolCall => ({ id, name, args });

/** A result's whole `timing` from its times: every stage it did not pass through took 0. */
function timing(at: { receivedAt: number; startedAt: number; endedAt: number; queue?: number; limit?: number }): ToolTiming {
  const { receivedAt, startedAt, endedAt, queue = 0, limit = 0 } = at;
  return {
    receivedAt,
    startedAt,
    endedAt,
    finishedAt: endedAt,
    durations: { intake: 0, policy: 0, queue, limit, execute: endedAt - startedAt, post: 0, total: endedAt - receivedAt },
  };
}

describe('timing follows the pipeline scheduler: on a TestScheduler, every figure is a frame', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  it('a body of timer(10) takes durations.execute === 10, from the frame the call came in', () => {
    const slow = sleeper('slow');
    scheduler.run(({ cold, expectObservable }) => {
      // Policies that answer at once: the guard and post-execute read the clock too (0 frames each).
      const pipeline = createPipeline({ tools: [slow], pre: [() => undefined], post: [() => undefined], scheduler });
      const calls = cold('5ms a|', { a: call('a', 'slow', { frames: 10 }) });
      expectObservable(calls.pipe(pipeline.operator(), map((r) => r.timing))).toBe('15ms (t|)', {
        t: timing({ receivedAt: 5, startedAt: 5, endedAt: 15 }),
      });
    });
  });

  it('a call waiting for a slot in the pool (concurrency) gets its wait in frames as queue time', () => {
    const slow = sleeper('slow');
    scheduler.run(({ cold, expectObservable }) => {
      const pipeline = createPipeline({ tools: [slow], concurrency: 1, scheduler });
      const calls = cold('(ab|)', { a: call('a', 'slow', { frames: 10 }), b: call('b', 'slow', { frames: 10 }) });
      expectObservable(calls.pipe(pipeline.operator(), map((r) => r.timing))).toBe('10ms a 9ms (b|)', {
        a: timing({ receivedAt: 0, startedAt: 0, endedAt: 10 }),
        b: timing({ receivedAt: 0, startedAt: 10, endedAt: 20, queue: 10 }),
      });
    });
  });

  it("a call waiting for its tool's limit or rate limit gets the wait in frames, as limit time within queue time", () => {
    const limited = sleeper('limited', { limit: { max: 1 } });
    const rated = sleeper('rated', { rateLimit: { max: 1, perMs: 100 } });
    scheduler.run(({ cold, expectObservable }) => {
      const pipeline = createPipeline({ tools: [limited, rated], scheduler });
      const calls = cold('(abcd|)', {
        a: call('a', 'limited', { frames: 10 }),
        b: call('b', 'limited', { frames: 10 }),
        c: call('c', 'rated', { frames: 10 }),
        d: call('d', 'rated', { frames: 10 }),
      });
      // b waits for a's permit (back at 10); d for c's token (back at 100)
      expectObservable(calls.pipe(pipeline.operator(), map((r) => r.timing))).toBe('10ms a 9ms (bc) 86ms (d|)', {
        a: timing({ receivedAt: 0, startedAt: 0, endedAt: 10 }),
        b: timing({ receivedAt: 0, startedAt: 10, endedAt: 20, queue: 10, limit: 10 }),
        c: timing({ receivedAt: 0, startedAt: 0, endedAt: 10 }),
        d: timing({ receivedAt: 0, startedAt: 100, endedAt: 110, queue: 100, limit: 100 }),
      });
    });
  });

  it('a body cut short (its time limit, a sibling failing with cancel-rest) ends at the frame it was cut', () => {
    const capped = sleeper('capped', { timeoutMs: 9 });
    const slow = sleeper('slow');
    scheduler.run(({ cold, expectObservable }) => {
      const pipeline = createPipeline({ tools: [capped, slow], onError: 'cancel-rest', scheduler });
      // a fails at 5, which cancels b (running) at 5; c, in its own turn, times out at 9
      const calls = cold('(abc|)', {
        a: call('a', 'slow', { frames: 20, failFirst: 5 }),
        b: call('b', 'slow', { frames: 20 }),
        c: { ...call('c', 'capped', { frames: 20 }), turn: 'other' },
      });
      expectObservable(calls.pipe(pipeline.operator(), map((r) => `${r.status}:${JSON.stringify(r.timing)}`))).toBe('5ms (ab) (c|)', {
        a: `error:${JSON.stringify(timing({ receivedAt: 0, startedAt: 0, endedAt: 5 }))}`,
        b: `cancelled:${JSON.stringify(timing({ receivedAt: 0, startedAt: 0, endedAt: 5 }))}`,
        c: `error:${JSON.stringify(timing({ receivedAt: 0, startedAt: 0, endedAt: 9 }))}`,
      });
    });
  });

  it("every event's at is a frame, on the same axis as the result's timing", () => {
    const flaky = sleeper('flaky', { idempotent: true, retry: { attempts: 2, backoff: { initialMs: 10, jitter: 0 } } });
    const seen: [PipelineEvent['type'], number][] = [];
    const timings: ToolTiming[] = [];
    scheduler.run(({ cold }) => {
      const pipeline = createPipeline({ tools: [flaky], scheduler });
      // The call at 2: attempt 1 fails at 6 and waits 10 frames; attempt 2 runs 16–26 and reports at 19.
      const calls = cold('2ms a|', { a: call('a', 'flaky', { frames: 10, progressAt: 3, failFirst: 4 }) });
      pipeline.events(calls).subscribe((event) => {
        seen.push([event.type, event.at]);
        if (event.type === 'result') timings.push(event.result.timing);
      });
    });
    expect(seen).toEqual([
      ['received', 2],
      ['decided', 2],
      ['started', 2],
      ['retry', 6],
      ['progress', 19],
      ['finished', 26],
      ['result', 26],
    ]);
    expect(timings).toEqual([timing({ receivedAt: 2, startedAt: 2, endedAt: 26 })]);
  });
});

describe('in real time, timing and event times stay on performance.now() (sub-millisecond, not the scheduler’s Date.now())', () => {
  const realTime: [string, SchedulerLike | undefined][] = [
    ['the default scheduler', undefined],
    ['asapScheduler', asapScheduler],
  ];
  it.each(realTime)('%s', async (_, scheduler) => {
    const quick = sleeper('quick');
    const pipeline = createPipeline({ tools: [quick], ...(scheduler === undefined ? {} : { scheduler }) });
    const ats: number[] = [];
    const before = performance.now();
    const results = await new Promise<ToolTiming[]>((resolve, reject) => {
      const timings: ToolTiming[] = [];
      pipeline.events([call('a', 'quick', { frames: 1 })]).subscribe({
        next: (event) => {
          ats.push(event.at);
          if (event.type === 'result') timings.push(event.result.timing);
        },
        error: reject,
        complete: () => resolve(timings),
      });
    });
    const after = performance.now();
    const [{ receivedAt, startedAt, endedAt, finishedAt }] = results as [ToolTiming];
    for (const at of [receivedAt, startedAt!, endedAt!, finishedAt, ...ats]) {
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(after);
    }
  });
});
