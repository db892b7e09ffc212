import { Observable, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { expect } from 'vitest';
import { z } from 'zod';
import { defineTool, outcome, type Limiter, type RateLimiter, type RetryOptions } from '../../../src/index.js';
import { CallPool } from '../../../src/engine/pool/callPool.js';
import type { BatchOptions } from '../../../src/engine/pool/batchOptions.js';
import { BatchCancel } from '../../../src/engine/records/batchCancel.js';
import { CallRecord } from '../../../src/engine/records/callRecord.js';
import type { PipelineSettings } from '../../../src/engine/settings.js';
import { ReorderWindow } from '../../../src/stream/reorderWindow.js';
import { resolvePipelineOptions, type PipelineOptions } from '../../../src/pipeline/options.js';

// The pool driven alone, in virtual time: records go in by hand (as the policy stages would send them),
// every body returns a thenable the test settles at a virtual time, and one log says, in order, when each
// body started and each result came out. After the pool, a reorder over the pool's window (`maxPending`)
// takes each result at once, as it does when nothing after the pool waits — or, for the calls
// `onTheWay` names, when the test says (`arrive`), as after a slow post chain. Shared by the pool's
// spec files.

/** One attempt of a body: when it started, its signal, and how to settle it. */
export interface Body {
  readonly start: number;
  readonly signal: AbortSignal;
  /** The body's `ctx.cancelRest()`. */
  cancelRest(): void;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** A pool under test, with its output and bodies. */
export interface Bench {
  readonly pool: CallPool;
  readonly batch: BatchCancel;
  readonly settings: PipelineSettings;
  /** The output's subscription: unsubscribing it tears the pool down, as the execute stage does. */
  readonly subscription: Subscription;
  /** Every result, in output order. */
  readonly results: CallRecord[];
  /** A record of tool `name` arrives (after intake and the policies): it is counted into the batch and sent. */
  send(id: string, name: string, facts?: { turn?: string; status?: 'denied' | 'outcome_unknown' }): CallRecord;
  /** Call `id`'s result, held on its way (`onTheWay`), reaches the reorder at `frame`. */
  arrive(frame: number, id: string): Subscription;
  /** Results given out in model order by the reorder after the pool, by id. */
  readonly inOrder: string[];
}

export let scheduler: TestScheduler;
/** `start <id> @t` when a body starts, `<id> <status> @t` when a result comes out, `complete @t` / `error <message> @t`. */
export let log: string[];
/** Each call's body (its latest attempt), by call id. */
export let bodies: Map<string, Body>;

/** Fresh clock, log and bodies (call it from `beforeEach`). */
export function reset(): void {
  scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  log = [];
  bodies = new Map();
}

export const now = (): number => scheduler.now();
/** Runs `step` at virtual time `frame` (inside `scheduler.run`). */
export const at = (frame: number, step: () => void): Subscription => scheduler.schedule(step, frame);

export interface ToolFacts {
  mode?: 'parallel' | 'exclusive';
  onError?: 'continue' | 'cancel-rest';
  timeoutMs?: number;
  retry?: RetryOptions;
  limit?: Limiter;
  rateLimit?: RateLimiter | { max: number; perMs: number };
  start?: 'eager' | 'after-response';
}

/** A tool whose bodies log their start and return a thenable the test settles (see `bodies`). */
export function tool(name: string, facts: ToolFacts = {}) {
  return defineTool({
    name,
    description: name,
    input: z.object({}),
    mode: 'parallel',
    idempotent: true,
    ...facts,
    execute: (_args, ctx) => {
      const body: Body = { start: now(), signal: ctx.signal, cancelRest: () => ctx.cancelRest(), resolve: () => undefined, reject: () => undefined };
      bodies.set(ctx.callId, body);
      log.push(`start ${ctx.callId} @${now()}`);
      return {
        then(onValue: (value: unknown) => void, onError: (error: unknown) => void) {
          body.resolve = onValue;
          body.reject = onError;
        },
      } as PromiseLike<unknown>;
    },
  });
}

/** Settles call `id`'s body at `frame`: with a value, or with `new Error(failure)`. */
export const settle = (frame: number, id: string, failure?: string): Subscription =>
  at(frame, () => (failure === undefined ? bodies.get(id)!.resolve(id) : bodies.get(id)!.reject(new Error(failure))));

/**
 * A pool over `tools` with `options` (no default time limit, a grace of 10), whose output is logged.
 * `batch` are the pool's batch options (rule 8); left out, the pool's defaults. `onTheWay` names the
 * calls whose results reach the reorder only when `arrive` says.
 */
export function bench(
  tools: readonly ReturnType<typeof tool>[],
  options: Partial<PipelineOptions> & { batch?: BatchOptions; onTheWay?: readonly string[] } = {},
  signal?: AbortSignal,
): Bench {
  const { batch: batchOptions, onTheWay = [], ...rest } = options;
  const settings = resolvePipelineOptions({ tools, defaultTimeoutMs: Infinity, abortGraceMs: 10, scheduler, ...rest });
  const batch = new BatchCancel();
  const results: CallRecord[] = [];
  const window = new ReorderWindow<CallRecord>(settings.maxPending);
  const inOrder: string[] = [];
  const held = new Map<string, CallRecord>();
  const reorder = (record: CallRecord) => {
    for (let out = window.take(record); out !== undefined; out = window.following()) inOrder.push(out.id);
    window.arrived();
  };
  let pool!: CallPool;
  const subscription = new Observable<CallRecord>((subscriber) => {
    pool = new CallPool(settings, subscriber, signal, batch, batchOptions, window);
    subscriber.add(() => pool.close());
  }).subscribe({
    next: (record) => {
      results.push(record);
      const why = record.error?.code === 'cancelled' ? `(${record.error.reason})` : '';
      log.push(`${record.id} ${record.status}${why} @${now()}`);
      if (onTheWay.includes(record.id)) held.set(record.id, record);
      else reorder(record);
    },
    error: (error: unknown) => log.push(`error ${(error as Error).message} @${now()}`),
    complete: () => log.push(`complete @${now()}`),
  });
  let index = 0;
  const send: Bench['send'] = (id, name, facts = {}) => {
    const record = new CallRecord(index++, id, name, {}, now());
    record.tool = settings.tools.get(name);
    record.turn = facts.turn;
    if (facts.status === 'denied') record.fail('denied', { code: 'denied', message: 'no', policy: 'test', reasons: [] } as never);
    // As a resume's journal answers it at `received`: in place (rule 7a).
    if (facts.status === 'outcome_unknown') record.settle({ kind: 'in-place', outcome: outcome.unknown('it had started before a crash') });
    batch.received(record);
    pool.next(record);
    return record;
  };
  const arrive: Bench['arrive'] = (frame, id) => at(frame, () => reorder(held.get(id)!));
  return { pool, batch, settings, subscription, results, send, arrive, inOrder };
}
