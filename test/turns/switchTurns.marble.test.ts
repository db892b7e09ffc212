import { concatWith, ignoreElements, map, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { sleeperCall as call, VirtualSleepers } from '../schedule/virtualSleepers.js';
import { createPipeline, queueTurns, switchTurns, type Pipeline, type ToolResult, type TurnContext } from '../../src/index.js';

// Bodies are virtual-time Observables `frames` long; `sleepers.starts` records when each began.
const sleepers = new VirtualSleepers();
const work = sleepers.tool('work', 'parallel');
const line = (r: ToolResult) => (r.error?.code === 'cancelled' ? `${r.id}:cancelled:${r.error.abortReason}:${r.started}` : `${r.id}:${r.status}`);

describe('switchTurns and queueTurns (virtual time)', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    sleepers.reset(() => scheduler.now());
  });

  it('a message while a turn runs aborts it with the reason: each call it received is answered at once, then the next turn runs', () => {
    const pipeline = createPipeline({ tools: [work] });
    const projected: [string, number, number][] = [];
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const messages = cold('a----b|');
      const streams: Record<string, Observable<ReturnType<typeof call>>> = {
        a: cold('xy', { x: call('x', 'work', 10), y: call('y', 'work', 10) }), // still streaming at 5
        b: cold('z|', { z: call('z', 'work', 10) }),
      };
      const first = streams['a'] as ReturnType<typeof cold>;
      const project = (message: string, turn: TurnContext) => {
        projected.push([message, turn.index, scheduler.now()]);
        return streams[message]!;
      };
      const results = messages.pipe(switchTurns(pipeline, project, { reason: () => 'next message' }), map(line));
      // x and y run 0–10 and 1–11; at 5 both are cancelled (their bodies saw the abort); z runs 5–15.
      expectObservable(results).toBe('-----(xy)------(z|)', {
        x: 'x:cancelled:next message:true',
        y: 'y:cancelled:next message:true',
        z: 'z:ok',
      });
      expectSubscriptions(first.subscriptions).toBe('^----!'); // read no further after the abort
    });
    expect(projected).toEqual([['a', 0, 0], ['b', 1, 5]]);
    expect(sleepers.starts).toEqual([['x', 0], ['y', 1], ['z', 5]]);
  });

  it("the aborted turn's model stream is read no further: unsubscribed at the abort", () => {
    const pipeline = createPipeline({ tools: [work] });
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold('x---y', { x: call('x', 'work', 2), y: call('y', 'work', 1) });
      const second = cold('z|', { z: call('z', 'work', 1) });
      const project = (message: string) => (message === 'a' ? first : second);
      // x finished at 2 (ok); the abort at 3 comes before y: y is never received, never answered.
      expectObservable(cold('a--b|').pipe(switchTurns(pipeline, project), map(line))).toBe('--x-(z|)', { x: 'x:ok', z: 'z:ok' });
      expectSubscriptions(first.subscriptions).toBe('^--!');
      expectSubscriptions(second.subscriptions).toBe('---^!');
    });
    expect(sleepers.starts).toEqual([['x', 0], ['z', 3]]);
  });

  it('a message superseded while it waits for the aborted turn to end is never projected (the latest wins)', () => {
    // In virtual time an aborted turn of a plain pipeline ends at the abort itself. A turn that takes
    // time to end after its abort (a durable turn journaling its answers, a slow result middleware) is
    // modelled by a pipeline whose runs complete 3 frames after their results.
    const plain = createPipeline({ tools: [work] });
    const slowToEnd: Pick<Pipeline, 'operator'> = { operator: (options) => (calls) => calls.pipe(plain.operator(options), concatWith(timer(3).pipe(ignoreElements()))) };
    const projected: string[] = [];
    scheduler.run(({ cold, expectObservable }) => {
      const streams: Record<string, Observable<ReturnType<typeof call>>> = {
        a: cold('x', { x: call('x', 'work', 10) }),
        b: cold('y|', { y: call('y', 'work', 1) }),
        c: cold('z|', { z: call('z', 'work', 1) }),
      };
      const project = (message: string) => (projected.push(message), streams[message]!);
      // b aborts a at 1 (x answered at 1, a's run ends at 4); c replaces b at 2; c's turn runs from 4.
      const results = cold('abc|').pipe(switchTurns(slowToEnd, project, { reason: (next) => `superseded by ${next}` }), map(line));
      // z runs 4–5; c's run ends 3 frames after, at 8.
      expectObservable(results).toBe('-x---z--|', { x: 'x:cancelled:superseded by b:true', z: 'z:ok' });
    });
    expect(projected).toEqual(['a', 'c']);
    expect(sleepers.starts).toEqual([['x', 0], ['z', 4]]);
  });

  it('the source completing lets the running turn finish; the output completes after it', () => {
    const pipeline = createPipeline({ tools: [work] });
    scheduler.run(({ cold, expectObservable }) => {
      const results = cold('a|').pipe(switchTurns(pipeline, () => cold('x|', { x: call('x', 'work', 4) })), map(line));
      expectObservable(results).toBe('----(x|)', { x: 'x:ok' });
    });
  });

  it("the source's error is forwarded at once, dropping the running turn", () => {
    const pipeline = createPipeline({ tools: [work] });
    scheduler.run(({ cold, expectObservable }) => {
      const stream = cold('x', { x: call('x', 'work', 4) });
      expectObservable(cold('a-#').pipe(switchTurns(pipeline, () => stream), map(line))).toBe('--#');
    });
  });

  it('queueTurns runs each turn after the one before, nothing aborted: results in turn order, then in model order', () => {
    const pipeline = createPipeline({ tools: [work] });
    const projected: [string, number][] = [];
    scheduler.run(({ cold, expectObservable }) => {
      const streams: Record<string, Observable<ReturnType<typeof call>>> = {
        a: cold('xy|', { x: call('x', 'work', 6), y: call('y', 'work', 1) }),
        b: cold('z|', { z: call('z', 'work', 4) }),
      };
      const project = (message: string) => (projected.push([message, scheduler.now()]), streams[message]!);
      // a: x 0–6, y 1–2 (held behind x, model order); b waits for a's end at 6: z 6–10.
      expectObservable(cold('ab|').pipe(queueTurns(pipeline, project), map(line))).toBe('------(xy)(z|)', { x: 'x:ok', y: 'y:ok', z: 'z:ok' });
    });
    expect(projected).toEqual([['a', 0], ['b', 6]]);
    expect(sleepers.starts).toEqual([['x', 0], ['y', 1], ['z', 6]]);
  });
});
