import { describe, expect, it } from 'vitest';
import { lastValueFrom, of, tap, toArray } from 'rxjs';
import { runHooks } from '../../src/engine/chains/hooks.js';
import { runStages } from '../../src/engine/runStages.js';
import { CallRecord } from '../../src/engine/records/callRecord.js';
import { createPipeline, defineTool } from '../../src/index.js';
import { resolvePipelineOptions } from '../../src/pipeline/options.js';
import type { CallHooks } from '../../src/types/hooks.js';
import type { CallView } from '../../src/types/callView.js';
import type { ToolCall } from '../../src/types/toolCall.js';
import type { ToolResult } from '../../src/types/toolResult.js';
import { z } from 'zod';

const call = (index: number): CallView => new CallRecord(index, `c${index}`, 'echo', {}, 0);

describe('runHooks', () => {
  it('is undefined when no layer has hooks, so a plain run pays one property read per point', () => {
    expect(runHooks([])).toBeUndefined();
    expect(runHooks([undefined, undefined])).toBeUndefined();
  });

  it('calls the layers in registration order at each point, and fills the points nobody watches', () => {
    const seen: string[] = [];
    const layer = (name: string): CallHooks => ({
      received: (c) => seen.push(`${name}:received:${c.id}`),
      finished: (r) => seen.push(`${name}:finished:${r.id}`),
    });
    const hooks = runHooks([layer('journal'), undefined, layer('events')])!;
    hooks.received(call(0));
    hooks.started(call(0)); // nobody watches: a no-op, not a crash
    hooks.finished({ id: 'c0' } as ToolResult);
    expect(seen).toEqual(['journal:received:c0', 'events:received:c0', 'journal:finished:c0', 'events:finished:c0']);
  });

  it('keeps a class-based layer’s `this`', () => {
    class Counter implements CallHooks {
      count = 0;
      started(): void {
        this.count++;
      }
    }
    const one = new Counter();
    const two = new Counter();
    runHooks([one])!.started(call(0));
    runHooks([one, two])!.started(call(1));
    expect([one.count, two.count]).toEqual([2, 1]);
  });
});

describe('the stages call the hooks at each moment of a call', () => {
  const echo = defineTool({ name: 'echo', description: 'echo', input: z.object({ n: z.number() }), mode: 'parallel', execute: async ({ n }, ctx) => (ctx.progress(n), n) });
  const flaky = defineTool({
    name: 'flaky', description: 'fails once', input: z.object({}), mode: 'parallel', idempotent: true,
    retry: { attempts: 2, backoff: { initialMs: 0 } },
    execute: (() => { let n = 0; return async () => { if (n++ === 0) throw new Error('first'); return 'ok'; }; })(),
  });

  it('received, decided, started, progress, retry and finished, in that order per call', async () => {
    const pipeline = createPipeline({ tools: [echo, flaky] });
    const events = await lastValueFrom(pipeline.events([{ id: 'a', name: 'echo', args: { n: 1 } }, { id: 'b', name: 'flaky', args: {} }]).pipe(toArray()));
    const of_ = (id: string) => events.filter((e) => e.id === id && e.type !== 'result').map((e) => e.type);
    expect(of_('a')).toEqual(['received', 'decided', 'started', 'progress', 'finished']);
    expect(of_('b')).toEqual(['received', 'decided', 'started', 'retry', 'finished']);
  });

  it('runStages calls the hooks it is given, and leaves the records without hooks when given none', async () => {
    const settings = resolvePipelineOptions({ tools: [echo] });
    const calls: ToolCall[] = [{ id: 'a', name: 'echo', args: { n: 1 } }];
    const seen: string[] = [];
    const watched: CallView[] = [];
    const hooks = runHooks([{ received: (c) => (watched.push(c), seen.push('received')), started: () => seen.push('started'), finished: () => seen.push('finished') }]);
    await lastValueFrom(of(...calls).pipe(runStages(settings, undefined, {}, hooks), toArray()));
    expect(seen).toEqual(['received', 'started', 'finished']);
    expect((watched[0] as CallRecord).hooks).toBe(hooks);
    const plain: CallRecord[] = [];
    await lastValueFrom(of(...calls).pipe(runStages(settings, undefined, { received: tap((r) => plain.push(r)) }), toArray()));
    expect(plain[0]!.hooks).toBeUndefined();
  });
});
