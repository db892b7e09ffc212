import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { implementTool, type AnyTool, type ToolContext } from '../../../src/index.js';
import { barrier, echo, fails, items, keyed, keyedSlow, progressing, sleep, sleepIdempotent, step, stepAlone, stepIdempotent, strictOnWorker, stubborn } from './contracts.js';

/** One line of a worker's log: what a body did, when (epoch ms, sub-millisecond, comparable across processes). */
export interface WorkerEvent {
  readonly e: 'start' | 'end' | 'abort' | 'item';
  readonly tool: string;
  readonly callId: string;
  readonly pid: number;
  readonly t: number;
  /**
   * The same moment on CLOCK_MONOTONIC (ms, ns resolution): one clock for every process of the
   * machine, never stepped by NTP, so the starts and ends of bodies in different processes (workers,
   * the agent's local tools) compare exactly; `t` is wall-clock anchored once per process.
   */
  readonly m: number;
  readonly item?: number;
}

export const now = () => performance.timeOrigin + performance.now();

/** CLOCK_MONOTONIC in milliseconds: comparable across the processes of one machine (see `WorkerEvent.m`). */
export const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

/** The worker tools of the fleet tests; each logs to `<logDir>/<pid>.jsonl` (its side-effect files). */
export function fleetTools(logDir: string): AnyTool[] {
  const log = (e: WorkerEvent['e'], tool: string, ctx: ToolContext, item?: number) =>
    appendFileSync(join(logDir, `${process.pid}.jsonl`), `${JSON.stringify({ e, tool, callId: ctx.callId, pid: process.pid, t: now(), m: monotonicMs(), ...(item === undefined ? {} : { item }) })}\n`);
  const sleeping = (name: string) => async ({ ms, fail = false }: { ms: number; fail?: boolean }, ctx: ToolContext) => {
    log('start', name, ctx);
    ctx.signal.addEventListener('abort', () => log('abort', name, ctx), { once: true });
    try {
      await delay(ms, undefined, { signal: ctx.signal });
      if (fail) throw new Error(`${name} failed as asked`);
    } finally {
      log('end', name, ctx);
    }
    return { pid: process.pid };
  };
  /** Throws on the first attempt of `ctx`'s key for `tool`, across the worker processes ('wx' fails if the file exists). */
  const failFirstAttempt = (tool: string, ctx: ToolContext) => {
    try {
      writeFileSync(join(logDir, `key-${tool}-${ctx.idempotencyKey}`), '', { flag: 'wx' });
    } catch {
      return; // not the first
    }
    throw new Error('the first attempt of a key fails');
  };
  return [
    implementTool(echo, ({ text }) => ({ echo: text, pid: process.pid })),
    implementTool(keyed, (_args, ctx) => {
      failFirstAttempt('keyed', ctx);
      return { key: ctx.idempotencyKey, pid: process.pid };
    }),
    implementTool(keyedSlow, async ({ ms }, ctx) => {
      failFirstAttempt('keyed_slow', ctx);
      return { key: ctx.idempotencyKey, ...(await sleeping('keyed_slow')({ ms }, ctx)) };
    }),
    implementTool(sleep, sleeping('sleep')),
    implementTool(sleepIdempotent, sleeping('sleep_idempotent')),
    implementTool(barrier, sleeping('barrier')),
    implementTool(step, sleeping('step')),
    implementTool(stepAlone, sleeping('step_alone')),
    implementTool(stepIdempotent, sleeping('step_idempotent')),
    implementTool(stubborn, async ({ ms }, ctx) => {
      log('start', 'stubborn', ctx);
      ctx.signal.addEventListener('abort', () => log('abort', 'stubborn', ctx), { once: true });
      await delay(ms);
      log('end', 'stubborn', ctx);
      return 'finished anyway';
    }),
    implementTool(strictOnWorker, ({ n }) => n),
    implementTool(items, async function* ({ count, gapMs, failAt }, ctx) {
      log('start', 'items', ctx);
      for (let i = 0; i < count; i++) {
        if (i === failAt) throw new Error(`failed after ${i} items`);
        if (i > 0 && gapMs > 0) await delay(gapMs, undefined, { signal: ctx.signal });
        log('item', 'items', ctx, i);
        yield i;
      }
      log('end', 'items', ctx);
    }),
    implementTool(progressing, async ({ steps, gapMs, fail = false }, ctx) => {
      for (let i = 1; i <= steps; i++) {
        ctx.progress({ done: i, total: steps });
        await delay(gapMs, undefined, { signal: ctx.signal });
      }
      if (fail) throw new Error(`failed after ${steps} steps`);
      return 'all done';
    }),
    implementTool(fails, ({ message }) => {
      throw new Error(message);
    }),
  ];
}
