import { finalize, map, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool } from '../../src/index.js';
import { spiedJournal, type Renewal } from '../support/spiedJournal.js';

// Issue 26's acceptance: a durable turn's lease renewal on a virtual scheduler, exact frames, no real
// time. `leaseMs: 300` renews every 100 frames; the body is `timer(ms)` on the test's scheduler. The
// store is `memoryJournal()`, which answers at once, so the whole turn follows virtual time. Its expiry
// is its own (wall clock): it never passes during the run, so only this process's belief moves here.

const SECRET = 'a test secret that is long enough to sign with';

/** A turn on a fresh TestScheduler: the pipeline, a spy over its journal, and what the body saw. */
function turnOn(bodyMs: number, answer: (frame: number) => Renewal = () => 'renew') {
  const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  const { journal, store, renewals, releases, blip } = spiedJournal(scheduler, answer);
  const body: { abortedAt?: number; endedAt?: number; abortedAtEnd?: boolean } = {};
  const slow = defineTool({
    name: 'slow',
    description: 'waits',
    input: z.object({}),
    execute: (_args, ctx) => {
      ctx.signal.addEventListener('abort', () => (body.abortedAt = scheduler.now()), { once: true });
      return timer(bodyMs, scheduler).pipe(
        map(() => 'done'),
        finalize(() => {
          body.endedAt = scheduler.now();
          body.abortedAtEnd = ctx.signal.aborted;
        }),
      );
    },
  });
  const pipeline = createPipeline({ tools: [slow], journal: store, approvalSecret: SECRET, leaseMs: 300, scheduler });
  const kinds = () => (journal.read('t') as readonly { kind: string }[]).map((entry) => entry.kind);
  return { scheduler, pipeline, renewals, releases, body, blip, kinds };
}

const call = { id: 'a', name: 'slow', args: {} };

describe('a durable turn’s lease renewal on a virtual scheduler', () => {
  // The result goes out through the execute chain (the journal's write-ahead is one of its members):
  // with a promise-based chain it would settle only after the flush, missing frame 250.
  it('renews at 100 and 200, gives the result at 250 and the lease up with it; the journal holds the whole turn', () => {
    const { scheduler, pipeline, renewals, releases, kinds } = turnOn(250);
    scheduler.run(({ cold, expectObservable }) => {
      const results = cold('a|', { a: call }).pipe(pipeline.operator({ turn: 't' }), map((result) => `${result.id}:${result.status}`));
      expectObservable(results).toBe('250ms (a|)', { a: 'a:ok' });
    });
    expect(renewals).toEqual([100, 200]);
    expect(releases).toEqual([250]);
    expect(kinds()).toEqual(['received', 'decided', 'started', 'finished', 'ended']);
  });

  it('a renewal refused at 200 (another process took the turn): lease_lost at 200, the body’s signal aborted then', () => {
    const { scheduler, pipeline, renewals, releases, body, kinds } = turnOn(250, (frame) => (frame === 200 ? 'refuse' : 'renew'));
    scheduler.run(({ cold, expectObservable }) => {
      const results = cold('a|', { a: call }).pipe(pipeline.operator({ turn: 't' }));
      expectObservable(results).toBe('200ms #', undefined, expect.objectContaining({ code: 'lease_lost' }));
    });
    expect(renewals).toEqual([100, 200]);
    expect(body).toEqual({ abortedAt: 200, endedAt: 200, abortedAtEnd: true });
    expect(releases).toEqual([]); // lost: not this process's to give up
    expect(kinds()).toEqual(['received', 'decided', 'started']); // written ahead of the body, durable at frame 0
  });

  it('renewals that fail at 100, 200 and 300 (a store blip): lost at 300, when now >= liveUntil', () => {
    const { scheduler, pipeline, renewals, body, blip } = turnOn(400, () => 'throw');
    scheduler.run(({ cold, expectObservable }) => {
      const results = cold('a|', { a: call }).pipe(pipeline.operator({ turn: 't' }));
      expectObservable(results).toBe('300ms #', undefined, expect.objectContaining({ code: 'lease_lost', cause: blip }));
    });
    expect(renewals).toEqual([100, 200, 300]);
    expect(body).toEqual({ abortedAt: 300, endedAt: 300, abortedAtEnd: true });
  });
});
