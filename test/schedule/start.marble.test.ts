import { catchError, map, throwError, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { sleeperCall, sleeperInput, VirtualSleepers } from './virtualSleepers.js';
import { createPipeline, defineTool, SourceError, type PipelineOptions, type ToolCall, type ToolResult, type ToolStart } from '../../src/index.js';

// Bodies are virtual-time Observables `frames` long; `sleepers.starts` records when each began.
const sleepers = new VirtualSleepers();
const sleeper = (name: string, mode: 'parallel' | 'exclusive', start?: ToolStart, limit?: { max: number }) =>
  sleepers.tool(name, mode, { ...(start === undefined ? {} : { start }), ...(limit === undefined ? {} : { limit }) });
const call = sleeperCall;
const describeResult = (r: ToolResult) => (r.status === 'cancelled' ? `${r.id}:cancelled:${(r.error as { reason: string }).reason}` : `${r.id}:${r.status}`);

describe("start: 'after-response' (virtual time)", () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    sleepers.reset(() => scheduler.now());
  });
  const outcomes = (options: PipelineOptions) => {
    const pipeline = createPipeline(options);
    return (calls: Observable<ToolCall>) => calls.pipe(pipeline.operator(), map(describeResult));
  };
  const write = sleeper('write', 'parallel', 'after-response');
  const read = sleeper('read', 'parallel');

  it('waits for the source to complete, holding no slot; eager calls behind it start at once', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(wr)---|', { w: call('w', 'write', 1), r: call('r', 'read', 1) });
      // concurrency 1: w holds no slot while it waits, so r runs 0–1; the source completes at 7, w runs 7–8
      expectObservable(calls.pipe(outcomes({ tools: [write, read], concurrency: 1 }))).toBe('--------(wr|)', { w: 'w:ok', r: 'r:ok' });
    });
    expect(sleepers.starts).toEqual([['r', 0], ['w', 7]]);
  });

  it('when the source errors it is cancelled, never run, answered in order before the error', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(wrv)--#', { w: call('w', 'write', 1), r: call('r', 'read', 1), v: call('v', 'write', 1) }, new Error('stream dropped'));
      const cause = catchError((error: unknown) => throwError(() => (error instanceof SourceError ? error.cause : error))); // the SourceError's
      expectObservable(calls.pipe(outcomes({ tools: [write, read] }), cause)).toBe('-------(wrv#)', { w: 'w:cancelled:response_failed', r: 'r:ok', v: 'v:cancelled:response_failed' }, new Error('stream dropped'));
    });
    expect(sleepers.starts).toEqual([['r', 0]]);
  });

  it('an exclusive call behind a waiting one keeps its order: it waits for it', () => {
    const ex = sleeper('ex', 'exclusive');
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(wxr)--|', { w: call('w', 'write', 2), x: call('x', 'ex', 1), r: call('r', 'read', 1) });
      // w waits for completion at 7 and runs 7–9; x alone 9–10; r after x, 10–11
      expectObservable(calls.pipe(outcomes({ tools: [write, ex, read] }))).toBe('---------wx(r|)', { w: 'w:ok', x: 'x:ok', r: 'r:ok' });
    });
    expect(sleepers.starts).toEqual([['w', 7], ['x', 9], ['r', 10]]);
  });

  it('an exclusive after-response call waits at the head: nothing passes it', () => {
    const commit = sleeper('commit', 'exclusive', 'after-response');
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(rcs)--|', { r: call('r', 'read', 1), c: call('c', 'commit', 1), s: call('s', 'read', 1) });
      expectObservable(calls.pipe(outcomes({ tools: [commit, read] }))).toBe('-r------c(s|)', { r: 'r:ok', c: 'c:ok', s: 's:ok' });
    });
    expect(sleepers.starts).toEqual([['r', 0], ['c', 7], ['s', 8]]);
  });

  it('starts as soon as the source completes, in the same frame; with a limit, it then waits for its permit', () => {
    const limited = sleeper('limited', 'parallel', 'after-response', { max: 1 });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(ab|)', { a: call('a', 'limited', 2), b: call('b', 'limited', 2) });
      expectObservable(calls.pipe(outcomes({ tools: [limited] }))).toBe('--a-(b|)', { a: 'a:ok', b: 'b:ok' });
    });
    expect(sleepers.starts).toEqual([['a', 0], ['b', 2]]);
  });

  it("a failure of its turn cancels a waiting call as it would any other ('sibling_failed')", () => {
    const fails = defineTool({ name: 'fails', description: 'fails', input: sleeperInput, mode: 'parallel', onError: 'cancel-rest', execute: () => timer(1).pipe(map(() => { throw new Error('no'); })) });
    scheduler.run(({ cold, expectObservable }) => {
      const calls = cold('(wf)---|', { w: call('w', 'write', 1), f: call('f', 'fails', 0) });
      expectObservable(calls.pipe(outcomes({ tools: [write, fails] }))).toBe('-(wf)--|', { w: 'w:cancelled:sibling_failed', f: 'f:error' });
    });
    expect(sleepers.starts).toEqual([]);
  });

  it('validates start eagerly', () => {
    expect(() => sleeper('x', 'parallel', 'later' as never)).toThrow(/`start` must be 'eager' or 'after-response'/);
    expect(sleeper('x', 'parallel').start).toBe('eager');
  });
});
