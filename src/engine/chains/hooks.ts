import type { CallHooks } from '../../types/hooks.js';

/** A run's hooks with every point present, so a stage calls `record.hooks?.started(record)` and nothing more. */
export type RunHooks = { readonly [K in keyof CallHooks]-?: NonNullable<CallHooks[K]> };

const NOTHING = (): void => undefined;
const POINTS = ['received', 'decided', 'approvalRequested', 'approvalAnswered', 'started', 'progress', 'retry', 'finished'] as const;

/**
 * The hooks of a run's layers as one object the engine calls, in registration order at each point;
 * `undefined` when no layer has any, so a plain run pays one property read per point. Built once per
 * run, never per call.
 *
 * @example
 * ```ts
 * const hooks = runHooks([journalHooks, eventHooks]); // journal first: the events see what it restored
 * calls$.pipe(runStages(settings, signal, hooks));
 * ```
 */
export function runHooks(layers: readonly (CallHooks | undefined)[]): RunHooks | undefined {
  const present = layers.filter((hooks): hooks is CallHooks => hooks !== undefined);
  if (present.length === 0) return undefined;
  const points = {} as Record<(typeof POINTS)[number], (...args: never[]) => void>;
  for (const point of POINTS) {
    // Bound: a layer may implement its hooks as methods of a class (the events layer does).
    const fns = present.flatMap((hooks) => (hooks[point] === undefined ? [] : [(hooks[point] as (...args: unknown[]) => void).bind(hooks)]));
    points[point] =
      fns.length === 0 ? NOTHING
      : fns.length === 1 ? fns[0]!
      : (...args: unknown[]) => {
          for (const fn of fns) fn(...args);
        };
  }
  return points as unknown as RunHooks;
}
