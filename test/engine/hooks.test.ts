import { describe, expect, it } from 'vitest';
import { lastValueFrom, of, toArray } from 'rxjs';
import { runHooks } from '../../src/engine/chains/hooks.js';
import { runStages } from '../../src/engine/runStages.js';
import { CallRecord } from '../../src/engine/records/callRecord.js';
import { reorderByIndex } from '../../src/engine/stages/reorder.js';
import { createPipeline, defineTool, memoryJournal, outcome, suspendApprovals, type JournalStore, type PipelineEvent } from '../../src/index.js';
import { resolvePipelineOptions } from '../../src/pipeline/options.js';
import type { CallHooks, ReceivedVerdict } from '../../src/types/hooks.js';
import type { PendingApproval } from '../../src/types/pendingApproval.js';
import type { CallView } from '../../src/types/callView.js';
import type { ToolCall } from '../../src/types/toolCall.js';
import type { ToolResult } from '../../src/types/toolResult.js';
import { z } from 'zod';

/** Resolves once `condition` holds, checked after each turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

const call = (index: number): CallRecord => new CallRecord(index, `c${index}`, 'echo', {}, 0);

describe('runHooks', () => {
  it('is undefined when no layer has hooks, so a plain run pays one property read per point', () => {
    expect(runHooks([])).toBeUndefined();
    expect(runHooks([undefined, undefined])).toBeUndefined();
  });

  it('calls the layers in registration order at each point, and fills the points nobody watches', () => {
    const seen: string[] = [];
    const layer = (name: string): CallHooks => ({
      received: (c) => {
        seen.push(`${name}:received:${c.id}`);
      },
      finished: (r) => {
        seen.push(`${name}:finished:${r.id}`);
      },
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

  it('suspend: the layers are asked in order until one gives a pending approval; with none it is undefined', () => {
    const pending = (token: string): PendingApproval => ({ turn: 't', callId: 'c0', index: 0, tool: 'echo', args: {}, reasons: [], token, expiresAt: 0 });
    const asked: string[] = [];
    const layer = (name: string, approval?: PendingApproval): CallHooks => ({ suspend: () => (asked.push(name), approval) });
    const first = pending('first');
    expect(runHooks([layer('events'), layer('journal', first), layer('other', pending('second'))])!.suspend(call(0))).toBe(first);
    expect(asked).toEqual(['events', 'journal']);
    expect(runHooks([{ started: () => undefined }])!.suspend(call(0))).toBeUndefined();
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

  it('runStages calls the hooks it is given, and the records carry them', async () => {
    const settings = resolvePipelineOptions({ tools: [echo] });
    const calls: ToolCall[] = [{ id: 'a', name: 'echo', args: { n: 1 } }];
    const seen: string[] = [];
    const watched: CallView[] = [];
    const hooks = runHooks([{ received: (c) => void (watched.push(c), seen.push('received')), started: () => void seen.push('started'), finished: () => void seen.push('finished') }]);
    await lastValueFrom(of(...calls).pipe(runStages(settings, undefined, hooks), toArray()));
    expect(seen).toEqual(['received', 'started', 'finished']);
    expect((watched[0] as CallRecord).hooks).toBe(hooks);
  });

  it('the guard asks the run’s layers to keep a call the approver suspended; with no layer that does, it fails closed', async () => {
    const settings = resolvePipelineOptions({ tools: [echo], defaultDecision: 'ask', approve: suspendApprovals() });
    const calls: ToolCall[] = [{ id: 'a', name: 'echo', args: { n: 1 } }];
    const approval: PendingApproval = { turn: 't', callId: 'a', index: 0, tool: 'echo', args: { n: 1 }, reasons: [], token: 'token', expiresAt: 0 };
    const suspended: CallView[] = [];
    const keeper = runHooks([{ suspend: (c) => (suspended.push(c), approval) }]);
    const [kept] = await lastValueFrom(of(...calls).pipe(runStages(settings, undefined, keeper), toArray()));
    expect(suspended.map((c) => c.id)).toEqual(['a']);
    expect(kept).toMatchObject({ status: 'suspended', error: { code: 'approval_pending', approval } });
    for (const hooks of [undefined, runHooks([{ started: () => undefined }])]) {
      const [failed] = await lastValueFrom(of(...calls).pipe(runStages(settings, undefined, hooks), toArray()));
      expect(failed).toMatchObject({ status: 'denied', error: { code: 'approval_unavailable' } });
    }
  });
});

describe('a received verdict settles the call (a resume’s journal)', () => {
  const ran: number[] = [];
  const write = defineTool({ name: 'write', description: 'writes', input: z.object({ n: z.number() }), mode: 'parallel', execute: async ({ n }) => (ran.push(n), n) });
  const approval: PendingApproval = { turn: 't', callId: 'c2', index: 2, tool: 'write', args: { n: 2 }, reasons: ['asks'], token: 'token', expiresAt: Date.now() + 60_000 };
  const verdicts: Record<number, ReceivedVerdict> = {
    0: { kind: 'replay', result: { status: 'ok', content: 'from the journal', value: 42, started: true } },
    1: { kind: 'in-place', outcome: outcome.unknown('it started before a crash') },
    2: { kind: 'suspended', error: { code: 'approval_pending', message: 'waits for a human', approval } },
  };

  it('no policy, approver or body sees it, a replay passes post untouched, and later layers see it settled', async () => {
    ran.length = 0;
    const seen = { pre: [] as number[], approver: [] as number[], post: [] as number[] };
    const settings = resolvePipelineOptions({
      tools: [write],
      pre: [(ctx) => (seen.pre.push(ctx.index), { decision: 'ask' })],
      approve: async (request) => (seen.approver.push(request.index), 'allowed-once'),
      post: [(ctx, next) => (seen.post.push(ctx.index), next())],
    });
    const statusAtReceived: unknown[] = [];
    const journal: CallHooks = { received: (call) => verdicts[call.index] };
    const later: CallHooks = { received: (call) => void statusAtReceived.push(call.status) };
    const calls = [0, 1, 2, 3].map((n): ToolCall => ({ id: `c${n}`, name: 'write', args: { n } }));
    const results = await lastValueFrom(of(...calls).pipe(runStages(settings, undefined, runHooks([journal, later])), reorderByIndex(), toArray()));

    expect(seen.pre).toEqual([3]);
    expect(seen.approver).toEqual([3]);
    expect(seen.post).toEqual([1, 2, 3]); // the replayed result's content is final: what the model saw the first time
    expect(ran).toEqual([3]);
    expect(statusAtReceived).toEqual(['ok', 'error', 'suspended', undefined]);
    expect(results[0]).toMatchObject({ status: 'ok', content: 'from the journal', value: 42, started: true, attempts: 1 });
    expect(results[1]).toMatchObject({ status: 'error', error: { code: 'outcome_unknown', message: 'Tool "write": it started before a crash' }, started: false, attempts: 0 });
    expect(results[2]).toMatchObject({ status: 'suspended', error: { code: 'approval_pending', approval } });
    expect(results[3]).toMatchObject({ status: 'ok', value: 3 });
  });

  it('the first verdict wins: a later layer’s is ignored', async () => {
    const settings = resolvePipelineOptions({ tools: [write] });
    const first: CallHooks = { received: () => verdicts[0] };
    const second: CallHooks = { received: () => verdicts[1] };
    const [result] = await lastValueFrom(of<ToolCall>({ id: 'c0', name: 'write', args: { n: 0 } }).pipe(runStages(settings, undefined, runHooks([first, second])), toArray()));
    expect(result).toMatchObject({ status: 'ok', content: 'from the journal' });
  });

  it('an in-place exclusive call fails at its turn as a failure of its mode: the rest of its turn is cancelled, not the calls before it', async () => {
    ran.length = 0;
    const exclusive = defineTool({ name: 'move', description: 'moves', input: z.object({ n: z.number() }), mode: 'exclusive', execute: async ({ n }) => (ran.push(n), n) });
    const settings = resolvePipelineOptions({ tools: [exclusive] });
    const journal: CallHooks = { received: (call) => (call.index === 1 ? verdicts[1] : undefined) };
    const calls = [0, 1, 2].map((n): ToolCall => ({ id: `c${n}`, name: 'move', args: { n } }));
    const results = await lastValueFrom(of(...calls).pipe(runStages(settings, undefined, runHooks([journal])), reorderByIndex(), toArray()));
    expect(results.map((r) => r.status)).toEqual(['ok', 'error', 'cancelled']);
    expect(ran).toEqual([0]);
  });
});

describe('a finished promise holds the result', () => {
  const echo = defineTool({ name: 'echo', description: 'echo', input: z.object({ n: z.number() }), mode: 'parallel', execute: async ({ n }) => n });
  const settings = resolvePipelineOptions({ tools: [echo] });
  const calls = [0, 1].map((n): ToolCall => ({ id: `c${n}`, name: 'echo', args: { n } }));

  it('until it settles; the later layer’s finished runs after it, and a result whose hooks answer at once is not held', async () => {
    const log: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const journal: CallHooks = { finished: (result) => (result.index === 0 ? held.then(() => void log.push('c0 durable')) : undefined) };
    const events: CallHooks = { finished: (result) => void log.push(`events finished ${result.id}`) };
    const out: string[] = [];
    const done = new Promise<void>((resolve, reject) => of(...calls).pipe(runStages(settings, undefined, runHooks([journal, events]))).subscribe({ next: (r) => void out.push(r.id), error: reject, complete: resolve }));
    await until(() => out.length > 0);
    await new Promise((resolve) => setImmediate(resolve)); // c0 finished first (it is held), c1 after
    expect(out).toEqual(['c1']);
    expect(log).toEqual(['events finished c1']);
    release();
    await done;
    expect(out).toEqual(['c1', 'c0']);
    expect(log).toEqual(['events finished c1', 'c0 durable', 'events finished c0']);
  });

  it('a rejection errors the run with its error, and the later layers’ finished does not run for it', async () => {
    const failure = new Error('the store is down');
    const journal: CallHooks = { finished: (result) => (result.index === 0 ? Promise.reject(failure) : undefined) };
    const finished: string[] = [];
    const events: CallHooks = { finished: (result) => void finished.push(result.id) };
    await expect(lastValueFrom(of(...calls).pipe(runStages(settings, undefined, runHooks([journal, events]))))).rejects.toBe(failure);
    expect(finished).not.toContain('c0');
  });

  it('a run whose hooks are all synchronous stays synchronous per call', () => {
    const now = defineTool({ name: 'now', description: 'sync', input: z.object({}), mode: 'parallel', execute: () => 'done' });
    const sync = resolvePipelineOptions({ tools: [now] });
    const hooks = runHooks([{ received: () => undefined, finished: () => undefined }]);
    for (const given of [undefined, hooks]) {
      const out: string[] = [];
      of<ToolCall>({ id: 'a', name: 'now', args: {} }).pipe(runStages(sync, undefined, given)).subscribe((r) => void out.push(r.id));
      expect(out).toEqual(['a']); // out before subscribe returned: no promise on the way
    }
  });

  it('in a durable turn the finished event comes once the journal’s finished entry is durable', async () => {
    const store = memoryJournal();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const log: string[] = [];
    const journal: JournalStore = new Proxy(store, {
      get: (target, key) =>
        key === 'append'
          ? async (...args: Parameters<JournalStore['append']>) => {
              if (args[1].some((entry) => entry.kind === 'finished')) {
                log.push('finished entry written');
                await held;
                log.push('finished entry durable');
              }
              return target.append(...args);
            }
          : (target[key as keyof JournalStore] as (...a: unknown[]) => unknown).bind(target),
    });
    const pipeline = createPipeline({ tools: [echo], journal, approvalSecret: 'x'.repeat(32) });
    const events: PipelineEvent[] = [];
    const done = new Promise<void>((resolve, reject) =>
      pipeline.events([{ id: 'a', name: 'echo', args: { n: 1 } }], { turn: 'conv/hooks' }).subscribe({ next: (e) => void (events.push(e), log.push(e.type)), error: reject, complete: resolve }),
    );
    await until(() => log.includes('finished entry written'));
    expect(events.map((e) => e.type)).toEqual(['received', 'decided', 'started']);
    release();
    await done;
    expect(log.slice(log.indexOf('finished entry durable'))).toEqual(['finished entry durable', 'finished', 'result']);
  });
});
