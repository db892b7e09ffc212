import { TestScheduler } from 'rxjs/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type RetryOptions } from '../../../src/index.js';
import { Attempts } from '../../../src/engine/pool/attempts.js';
import type { AttemptOutcome, AttemptsHost } from '../../../src/engine/pool/attemptsHost.js';
import type { AttemptSettings } from '../../../src/engine/settings.js';
import { outcome } from '../../../src/index.js';
import { CallRecord } from '../../../src/engine/records/callRecord.js';
import type { StartCheck } from '../../../src/types/policy.js';

// The attempts driven alone: a fake pool (the host) logs what it is told, with the virtual time it was
// told; bodies settle when the test says, at virtual times scheduled inside `TestScheduler.run`.

/** One attempt of a body: when it started, its signal, and how to settle it. */
interface Attempt {
  readonly start: number;
  readonly signal: AbortSignal;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

let scheduler: TestScheduler;
const now = () => scheduler.now();
let attempts: Attempt[];
beforeEach(() => {
  scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  attempts = [];
});

/** A tool whose every attempt returns a thenable the test settles (synchronously, at a virtual time). */
function tool(facts: { timeoutMs?: number; retry?: RetryOptions; rateLimit?: { max: number; perMs: number } } = {}) {
  return defineTool({
    name: 't',
    description: 't',
    input: z.object({}),
    mode: 'parallel',
    idempotent: true,
    ...facts,
    execute: (_args, ctx) => {
      const attempt: Attempt = { start: now(), signal: ctx.signal, resolve: () => undefined, reject: () => undefined };
      attempts.push(attempt);
      return {
        then(onValue: (value: unknown) => void, onError: (error: unknown) => void) {
          attempt.resolve = onValue;
          attempt.reject = onError;
        },
      } as PromiseLike<unknown>;
    },
  });
}

/** The pool, as far as the attempts see it: a slot per call, and a log of what it was told. */
class FakePool implements AttemptsHost {
  closed = false;
  readonly log: string[] = [];
  readonly slots = new Set<CallRecord>();
  release(record: CallRecord): void {
    // What the pool's release does to the run: it is over, and its timer with it.
    record.run!.done = true;
    record.run!.clearTimer();
    this.slots.delete(record);
    this.log.push(`release @${now()}`);
  }
  ended(_record: CallRecord, outcome: AttemptOutcome): void {
    this.log.push(`${outcome} @${now()}`);
  }
  spend(): void {
    this.log.push(`spend @${now()}`);
  }
  /** What `retake` answers (a rate-limited tool's retry), and the `resume` it was given. */
  token: 'held' | 'waiting' | 'parked' = 'held';
  resume: (() => void) | undefined = undefined;
  retake(record: CallRecord, resume: () => void): 'held' | 'waiting' | 'parked' {
    this.log.push(`retake @${now()}: ${this.token}`);
    this.resume = resume;
    if (this.token === 'parked') this.slots.delete(record);
    return this.token;
  }
  holdsSlot(record: CallRecord): boolean {
    return this.slots.has(record);
  }
  cancelRest(): void {
    this.log.push(`cancelRest @${now()}`);
  }
}

function setUp(t: ReturnType<typeof tool>, abortGraceMs: number) {
  const host = new FakePool();
  const settings: AttemptSettings = { scheduler, abortGraceMs, defaultTimeoutMs: undefined, policyTimeoutMs: undefined, retention: new Map(), execute: [], executeNames: [] };
  const record = new CallRecord(0, 'a', 't', {}, 0);
  record.tool = t;
  host.slots.add(record);
  return { host, record, attempts: new Attempts(host, settings) };
}

/** Runs `step` at virtual time `at` (inside `scheduler.run`). */
const at = (frame: number, step: () => void) => scheduler.schedule(step, frame);
const constant = (ms: number) => ({ initialMs: ms, factor: 1, maxMs: ms, jitter: 0 });
const cancelled = { reason: 'sibling_failed', by: { id: 'x', name: 'x' } } as const;

describe('Attempts: one call in its slot', () => {
  it('a timed-out body that ignores its signal fails at its limit and keeps its slot until the grace is over', () => {
    const { host, record, attempts: pool } = setUp(tool({ timeoutMs: 5 }), 10);
    scheduler.run(() => {
      pool.start(record, false);
    });
    expect(record.status).toBe('error');
    expect(record.error).toMatchObject({ code: 'timeout', timeoutMs: 5 });
    expect(attempts[0]!.signal.aborted).toBe(true);
    // Answered at 5 (the pool emits it and goes on), the slot freed only at 5 + 10.
    expect(host.log).toEqual(['failed @5', 'release @15', 'freed @15']);
  });

  it('a timed-out body that settles within the grace frees its slot when it settles, reported late', () => {
    const { host, record, attempts: pool } = setUp(tool({ timeoutMs: 5 }), 10);
    scheduler.run(() => {
      pool.start(record, false);
      at(8, () => attempts[0]!.resolve('too late'));
    });
    expect(record.error?.code).toBe('timeout');
    expect(host.log).toEqual(['failed @5', 'release @8', 'freed @8']);
  });

  it('a retry waits the backoff in the slot, starts only once the timed-out attempt settled, and ignores a late report', () => {
    const { host, record, attempts: pool } = setUp(tool({ timeoutMs: 5, retry: { attempts: 3, backoff: constant(4) } }), 10);
    scheduler.run(() => {
      pool.start(record, false);
      // Attempt 1 times out at 5 and ignores its signal until 11: the delay runs 11–15.
      at(11, () => attempts[0]!.resolve('first'));
      // Attempt 2 (from 15) is answered at 17; attempt 1 speaks again at 18, and is not heard.
      at(17, () => attempts[1]!.resolve('second'));
      at(18, () => attempts[0]!.resolve('first, again'));
    });
    expect(attempts.map((attempt) => attempt.start)).toEqual([0, 15]);
    expect(attempts[0]!.signal.aborted).toBe(true);
    expect(attempts[1]!.signal).not.toBe(attempts[0]!.signal); // a fresh signal per attempt
    expect(attempts[1]!.signal.aborted).toBe(false);
    expect(record).toMatchObject({ status: 'ok', value: 'second', attempts: 2 });
    // The slot was held from the first start to the answer: released once, then answered once.
    expect(host.log).toEqual(['release @17', 'answered @17']);
    expect(record.trace).toEqual([expect.objectContaining({ event: 'attempt_failed', attempt: 1, delayMs: 4 })]);
  });

  it('the report of an attempt abandoned after its grace is ignored once the next attempt runs', () => {
    const { host, record, attempts: pool } = setUp(tool({ timeoutMs: 5, retry: { attempts: 2, backoff: constant(4) } }), 3);
    scheduler.run(() => {
      pool.start(record, false);
      // Attempt 1 times out at 5, abandoned at 8; the delay runs 8–12.
      at(13, () => attempts[0]!.reject(new Error('first, failing late')));
      at(14, () => attempts[1]!.resolve('second'));
    });
    expect(attempts.map((attempt) => attempt.start)).toEqual([0, 12]);
    expect(record).toMatchObject({ status: 'ok', value: 'second', attempts: 2 });
    expect(host.log).toEqual(['release @14', 'answered @14']);
  });

  /** A tool that may retry, whose first attempt rejects with `error` at 2. */
  const rejectedOnce = (error: unknown) => {
    const { host, record, attempts: pool } = setUp(tool({ retry: { attempts: 3, backoff: constant(1) } }), 10);
    scheduler.run(() => {
      pool.start(record, false);
      at(2, () => attempts[0]!.reject(error));
    });
    return { host, record };
  };

  it('a body whose outcome is unknown fails as outcome_unknown, and is not retried', () => {
    const { host, record } = rejectedOnce(outcome.unknown('its worker died mid-body'));
    expect(attempts).toHaveLength(1);
    expect(record).toMatchObject({ status: 'error', attempts: 1, error: { code: 'outcome_unknown', message: 'Tool "t": its worker died mid-body' } });
    expect(host.log).toEqual(['release @2', 'failed @2']);
  });

  it('a body suspended on its approvals ends as suspended (not failed), and is not retried', () => {
    const pending = { code: 'approval_pending', message: 'Suspended: waits for a human.', approval: { token: 'tok' } } as never;
    const { host, record } = rejectedOnce(outcome.suspended(pending));
    expect(attempts).toHaveLength(1);
    expect(record.status).toBe('suspended');
    expect(record.error).toBe(pending);
    expect(host.log).toEqual(['release @2', 'suspended @2']);
  });

  it('cancelling a call during its backoff frees its slot at once, and no attempt starts after it', () => {
    const { host, record, attempts: pool } = setUp(tool({ retry: { attempts: 3, backoff: constant(10) } }), 50);
    scheduler.run(() => {
      pool.start(record, false);
      at(1, () => attempts[0]!.reject(new Error('flaky')));
      at(3, () => {
        record.cancel(cancelled);
        pool.stop(record, new DOMException('cancelled (sibling_failed)', 'AbortError'));
      });
    });
    // Not after the 50 ms grace: nothing runs between attempts, so nothing is waited for.
    expect(host.log).toEqual(['release @3']);
    expect(attempts).toHaveLength(1); // the delay (due at 11) was cleared
    expect(record.status).toBe('cancelled');
  });

  /** A rate-limited tool whose first attempt fails at 1 (the retry is due at 3) and whose retake answers `token`. */
  const rateLimitedRetry = (token: FakePool['token'], then: (host: FakePool) => void) => {
    const { host, record, attempts: pool } = setUp(tool({ timeoutMs: 20, retry: { attempts: 2, backoff: constant(2) }, rateLimit: { max: 1, perMs: 1000 } }), 10);
    host.token = token;
    scheduler.run(() => {
      pool.start(record, false);
      at(1, () => attempts[0]!.reject(new Error('flaky')));
      then(host);
    });
    return { host, record };
  };

  it("a rate-limited tool's retry takes a token of its own: it waits for it on the call's time limit, then runs", () => {
    const { host, record } = rateLimitedRetry('waiting', (pool) => {
      at(10, () => pool.resume!()); // the token, 7 ms into the wait (its limit would end at 23)
      at(12, () => attempts[1]!.resolve('second'));
    });
    expect(attempts.map((attempt) => attempt.start)).toEqual([0, 10]);
    expect(record).toMatchObject({ status: 'ok', value: 'second', attempts: 2 });
    expect(host.log).toEqual(['spend @0', 'retake @3: waiting', 'spend @10', 'release @12', 'answered @12']);
  });

  it('a parked retry that gets no token (or slot) within its time limit ends as a timeout', () => {
    const { host, record } = rateLimitedRetry('parked', () => undefined);
    expect(attempts).toHaveLength(1);
    expect(record.error).toMatchObject({ code: 'timeout', timeoutMs: 20 });
    expect(record.error?.message).toContain('waiting to start attempt 2: its rate limit had no token for it, or the pool a free slot.');
    expect(host.log).toEqual(['spend @0', 'retake @3: parked', 'release @23', 'failed @23']);
  });

  it('start checks run under the slot, their signal aborts when the call is cancelled, and the body gets a signal of its own', async () => {
    const checkSignals: AbortSignal[] = [];
    const verdicts: ((verdict: undefined) => void)[] = [];
    const check: StartCheck = (_args, signal) => (checkSignals.push(signal), new Promise((resolve) => verdicts.push(resolve)));
    const twice = () => {
      const { host, record, attempts: pool } = setUp(tool(), Infinity);
      record.addStartCheck({ policy: 'still-there', check });
      pool.start(record, false);
      return { host, record, pool };
    };
    const passed = twice();
    const cancelledOne = twice();
    expect(attempts).toHaveLength(0); // both wait for their checks
    cancelledOne.record.cancel(cancelled);
    cancelledOne.pool.stop(cancelledOne.record, new DOMException('cancelled (sibling_failed)', 'AbortError'));
    expect(checkSignals[1]!.aborted).toBe(true);
    expect(cancelledOne.host.log).toEqual([]); // the slot is held until the checks settle
    verdicts.forEach((answer) => answer(undefined));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cancelledOne.host.log).toEqual(['release @0', 'freed @0']);
    expect(attempts).toHaveLength(1); // only the call that was not cancelled started
    expect(passed.record.started).toBe(true);
    expect(attempts[0]!.signal).not.toBe(checkSignals[0]);
    expect(checkSignals[0]!.aborted).toBe(false);
  });
});
