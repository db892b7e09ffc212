import type { ExecuteMiddleware } from '../../types/execute.js';

/**
 * A body starting or ending, as an {@link InvariantMonitor} saw it: one `start` and one `end` per
 * attempt of a call's execution, in the exact order they happened.
 *
 * @example
 * ```ts
 * const entry: MonitorEntry = { type: 'start', index: 0, id: 'call_1', name: 'write_file', exclusive: true };
 * ```
 */
export interface MonitorEntry {
  readonly type: 'start' | 'end';
  /** The call's arrival index (`result.index`). */
  readonly index: number;
  readonly id: string;
  readonly name: string;
  /** The tool's mode is `'exclusive'`. */
  readonly exclusive: boolean;
}

/**
 * The starts and ends of bodies, in the order they happened: what `checkInvariants` reads for exact
 * checks of concurrency, barriers and admission.
 *
 * @example
 * ```ts
 * const starts = monitor.log.filter((entry) => entry.type === 'start').length;
 * ```
 */
export type MonitorLog = readonly MonitorEntry[];

/**
 * Watches one run's bodies: `execute` is an execute middleware to put first in the pipeline's
 * `execute` option, and `log` the starts and ends it saw, in order.
 *
 * @example
 * ```ts
 * const monitor = invariantMonitor();
 * const pipeline = createPipeline({ tools, concurrency: 2, execute: [monitor.execute] });
 * const results = await pipeline.run(calls);
 * expect(checkInvariants({ calls, results, log: monitor.log, tools, concurrency: 2 })).toEqual({ ok: true });
 * ```
 */
export interface InvariantMonitor {
  readonly execute: ExecuteMiddleware;
  readonly log: MonitorLog;
}

/**
 * A monitor of one run's bodies, for {@link checkInvariants}: its execute middleware writes a `start`
 * when a call's execution begins and an `end` when it has settled — inside the call's pool slot, so
 * the log's order is the exact order of the bodies, where results' timestamps can tie. Pass its `log`
 * to `checkInvariants` for exact checks; make one monitor per run (indexes restart at 0 with each
 * subscription).
 *
 * It runs `next()` once and hands on what it gives unchanged (the body's value, or the very error it
 * failed with), so the body's outcome, retries and `onError` are as without it. A retried call logs a
 * `start` and an `end` per attempt. A body that ignores its signal may outlive its slot once
 * `abortGraceMs` is over: the log then shows it running beside the next one, as it did (use
 * `abortGraceMs: Infinity`, or bodies that honour their signal, where the bound must hold exactly).
 *
 * @example
 * ```ts
 * const monitor = invariantMonitor();
 * const pipeline = createPipeline({ tools, execute: [monitor.execute] });
 * const results = await pipeline.run(calls);
 * const report = checkInvariants({ calls, results, log: monitor.log, tools, concurrency: 8 });
 * ```
 */
export function invariantMonitor(): InvariantMonitor {
  const log: MonitorEntry[] = [];
  const execute: ExecuteMiddleware = (ctx, next) => {
    const entry = (type: 'start' | 'end'): MonitorEntry => ({ type, index: ctx.index, id: ctx.call.id, name: ctx.tool.name, exclusive: ctx.tool.mode === 'exclusive' });
    log.push(entry('start'));
    let output: unknown;
    try {
      output = next();
    } catch (error) {
      log.push(entry('end'));
      throw error;
    }
    if (!isThenable(output)) {
      log.push(entry('end'));
      return output;
    }
    return output.then(
      (value) => {
        log.push(entry('end'));
        return value;
      },
      (error: unknown) => {
        log.push(entry('end'));
        throw error;
      },
    );
  };
  return { execute, log };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
