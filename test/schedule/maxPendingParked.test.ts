/**
 * Issue 24, finding 2: `maxPending` bounded only the queue's head. Calls parked on a `limit` or a
 * `rateLimit`, and `after-response` calls once the response ended, started without the check: with
 * `maxPending: 2` and one 400 ms straggler, 28 of 30 limited calls started while their results waited
 * behind it. Every start now passes the same check (`ReorderWindow.mayStart`), and — since the window
 * counts a call's result before its slot or its permit is given to another — exactly `maxPending` of
 * them start behind the straggler, whichever way they came.
 */
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/index.js';
import { sleeperCall as call, statuses, VirtualSleepers } from './virtualSleepers.js';

const sleepers = new VirtualSleepers();
const CALLS = 30;

/** The straggler `s` (400 frames), then `CALLS` one-frame calls `c0…` of `tool`. */
const marbles = (tool: string) => {
  const values: Record<string, ReturnType<typeof call>> = { s: call('s', 'slow', 400) };
  for (let i = 0; i < CALLS; i++) values[`c${i}`] = call(`c${i}`, tool, 1);
  return values;
};

/** Starts of `c…` calls while the straggler ran (it started at 0 and ended at 400). */
const startedBehind = () => sleepers.starts.filter(([key, at]) => key !== 's' && at < 400).map(([key]) => key);

describe('maxPending bounds every start, however the call came (virtual time)', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    sleepers.reset(() => scheduler.now());
  });

  /** Pushes the straggler and the 30 calls at once, and runs them to the end. */
  function run(tool: string, tools: ReturnType<VirtualSleepers['tool']>[], concurrency: number): string[] {
    const values = marbles(tool);
    const outcome: string[] = [];
    scheduler.run(({ cold }) => {
      const names = Object.keys(values);
      const source = cold(`(${names.map((_, i) => String.fromCharCode(0x100 + i)).join('')}|)`, Object.fromEntries(names.map((name, i) => [String.fromCharCode(0x100 + i), values[name]!])));
      source.pipe(statuses({ tools, concurrency, maxPending: 2 })).subscribe((line) => outcome.push(line));
    });
    return outcome;
  }

  it('calls granted a permit of their limit: only maxPending of them start behind the straggler', () => {
    const slow = sleepers.tool('slow', 'parallel');
    const limited = sleepers.tool('limited', 'parallel', { limit: createLimiter({ max: 1 }) });
    const outcome = run('limited', [slow, limited], 4);
    // c0 starts at 0, c1 (granted c0's permit) at 1; at 2 c1's result is the second to wait behind s,
    // counted before its permit goes to c2, and nothing more starts until s ends at 400. The code of
    // issue 24 started all 30 behind it, one a frame; that of issue 25's S11 three (c2 was granted c1's
    // permit and started before c1's result was counted).
    expect(startedBehind()).toEqual(['c0', 'c1']);
    expect(sleepers.starts.slice(0, 4)).toEqual([['s', 0], ['c0', 0], ['c1', 1], ['c2', 400]]);
    expect(outcome).toEqual(['s:ok', ...Array.from({ length: CALLS }, (_, i) => `c${i}:ok`)]);
  });

  it('calls granted a token of their rate limit: the same', () => {
    const slow = sleepers.tool('slow', 'parallel');
    const rated = sleepers.tool('rated', 'parallel', { rateLimit: { max: 1, perMs: 2 } });
    const outcome = run('rated', [slow, rated], 4);
    expect(startedBehind()).toEqual(['c0', 'c1']);
    expect(sleepers.starts.slice(0, 4)).toEqual([['s', 0], ['c0', 0], ['c1', 2], ['c2', 400]]);
    expect(outcome).toHaveLength(CALLS + 1);
  });

  it('after-response calls once the response ended: the same', () => {
    const slow = sleepers.tool('slow', 'parallel');
    const later = sleepers.tool('later', 'parallel', { start: 'after-response' });
    // concurrency 2: s and one more at a time, so the bound, not the pool, is what stops them.
    const outcome = run('later', [slow, later], 2);
    expect(startedBehind()).toEqual(['c0', 'c1']);
    expect(sleepers.starts.slice(0, 4)).toEqual([['s', 0], ['c0', 0], ['c1', 1], ['c2', 400]]);
    expect(outcome).toHaveLength(CALLS + 1);
  });

  it('the next straggler starts as soon as it is the straggler, while the bound is still full', () => {
    const limiter = createLimiter({ max: 1 });
    const limited = sleepers.tool('limited', 'parallel', { limit: limiter });
    const quick = sleepers.tool('quick', 'parallel');
    const outcome: string[] = [];
    scheduler.run(({ cold }) => {
      // h holds the limiter 0–5; s waits for it, and so does q behind it; a and b end at 1, so 2
      // results wait behind h while l runs on. At 5 h's result is out and s, granted the permit, is the
      // straggler: it starts then, though 2 results still wait and l runs; q once s's result is out.
      const values = { h: call('h', 'limited', 5), s: call('s', 'limited', 3), a: call('a', 'quick', 1), b: call('b', 'quick', 1), l: call('l', 'quick', 10), q: call('q', 'limited', 1) };
      cold('(hsablq|)', values).pipe(statuses({ tools: [limited, quick], concurrency: 4, maxPending: 2 })).subscribe((line) => outcome.push(line));
    });
    expect(sleepers.starts).toEqual([['h', 0], ['a', 0], ['b', 0], ['l', 0], ['s', 5], ['q', 8]]);
    expect(outcome).toEqual(['h:ok', 's:ok', 'a:ok', 'b:ok', 'l:ok', 'q:ok']);
  });
});
