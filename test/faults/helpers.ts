import type { Observable } from 'rxjs';
import { expect, vi } from 'vitest';
import type { ToolResult } from '../../src/index.js';

/** A timer that honours an optional signal (rejects with its reason). */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** A promise that never settles. */
export const never = <T = never>(): Promise<T> => new Promise<T>(() => {});

/** Lets pending timers (and the microtasks behind them) run. */
export const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const HUNG = Symbol('hung');

/** Resolves with `promise`'s value, or with `HUNG` when it does not settle within `ms`. */
export function within<T>(promise: Promise<T>, ms = 300): Promise<T | typeof HUNG> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof HUNG>((resolve) => (timer = setTimeout(() => resolve(HUNG), ms)));
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Asserts the invariant: one result per call, ids in input order, `index` 0..n-1. */
export function expectOneEach(results: readonly ToolResult[] | typeof HUNG, ids: readonly string[]): asserts results is readonly ToolResult[] {
  expect(results, 'the run did not settle').not.toBe(HUNG);
  const list = results as readonly ToolResult[];
  expect(list.map((r) => r.id)).toEqual(ids);
  expect(list.map((r) => r.index)).toEqual(ids.map((_, i) => i));
  for (const result of list) expect(typeof result.content).toBe('string');
}

/** `[id, status, error code]` of each result, for compact assertions. */
export const outline = (results: readonly ToolResult[]) => results.map((r) => [r.id, r.status, r.error?.code]);

/**
 * Runs `fn` with Node's `unhandledRejection` listeners (the test runner's among them) set aside, and
 * collects what would have been reported, so a test can assert there was none without failing the run.
 */
export async function collectUnhandled<T>(fn: () => Promise<T>, settleMs = 20): Promise<{ value: T; unhandled: unknown[] }> {
  const unhandled: unknown[] = [];
  const saved = process.listeners('unhandledRejection');
  const collect = (reason: unknown) => void unhandled.push(reason);
  process.removeAllListeners('unhandledRejection');
  process.on('unhandledRejection', collect);
  try {
    const value = await fn();
    await tick(settleMs);
    return { value, unhandled };
  } finally {
    process.off('unhandledRejection', collect);
    for (const listener of saved) process.on('unhandledRejection', listener);
  }
}

/** What an operator subscription saw, in order: results, then `complete` or `error`. */
export interface Recording {
  readonly events: string[];
  readonly results: ToolResult[];
  readonly done: Promise<'complete' | { error: unknown }>;
}

/** Subscribes to `results$` and records every event. */
export function record(results$: Observable<ToolResult>): Recording & { unsubscribe(): void } {
  const events: string[] = [];
  const results: ToolResult[] = [];
  let unsubscribe = () => {};
  const done = new Promise<'complete' | { error: unknown }>((resolve) => {
    const subscription = results$.subscribe({
      next: (result) => {
        results.push(result);
        events.push(`${result.id}:${result.status}`);
      },
      error: (error: unknown) => {
        events.push('error');
        resolve({ error });
      },
      complete: () => {
        events.push('complete');
        resolve('complete');
      },
    });
    unsubscribe = () => subscription.unsubscribe();
  });
  return { events, results, done, unsubscribe: () => unsubscribe() };
}

/**
 * Spies on the abort listeners added to and removed from `signal`, so a test can check that every one
 * the pipeline added was removed again.
 */
export function spyAbortListeners(signal: AbortSignal) {
  const add = vi.spyOn(signal, 'addEventListener');
  const remove = vi.spyOn(signal, 'removeEventListener');
  const abortListeners = (calls: readonly (readonly unknown[])[]) => calls.filter(([type]) => type === 'abort').map(([, listener]) => listener);
  return {
    get added() {
      return abortListeners(add.mock.calls);
    },
    get removed() {
      return abortListeners(remove.mock.calls);
    },
    /** Listeners added and not removed since. */
    get live() {
      const removed = new Set(this.removed);
      return this.added.filter((listener) => !removed.has(listener));
    },
  };
}
