import type { CallView } from '../../types/callView.js';
import type { ExecuteMiddleware } from '../../types/execute.js';
import type { CallHooks, ReceivedVerdict } from '../../types/hooks.js';
import type { PendingApproval } from '../../types/pendingApproval.js';
import type { ToolResult } from '../../types/toolResult.js';
import type { Chain } from './chainsByTool.js';

/** The call as the engine hands it to `received`: its view, and the way to apply a layer's verdict (the record). */
export interface ReceivedCall extends CallView {
  settle(verdict: ReceivedVerdict): void;
}

/**
 * A run's hooks with every point present, so a stage calls `record.hooks?.started(record)` and nothing
 * more. `received` applies the layers' verdicts itself; `finished` returns a promise only when a layer's
 * did (then the later layers' hooks have run once it settled); `suspend` returns the first pending
 * approval a layer gives (`undefined` when none keeps suspended calls: the guard fails the call
 * closed). `execute` is the layers' own execute middleware as one chain, outermost first (`undefined`
 * when no layer has any): the pool puts it around the pipeline's and the tool's.
 */
export type RunHooks = { readonly [K in Exclude<keyof CallHooks, 'received' | 'execute'>]-?: NonNullable<CallHooks[K]> } & {
  readonly received: (call: ReceivedCall) => void;
  readonly execute: Chain<ExecuteMiddleware> | undefined;
};

type Point = Exclude<keyof CallHooks, 'received' | 'finished' | 'execute' | 'suspend'>;
type Finished = NonNullable<CallHooks['finished']>;
type Suspend = NonNullable<CallHooks['suspend']>;

const NOTHING = (): void => undefined;
const NO_APPROVAL = (): undefined => undefined;
const POINTS: readonly Point[] = ['decided', 'approvalRequested', 'approvalAnswered', 'started', 'progress', 'retry'];

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
  const points = {} as Record<Point, (...args: never[]) => void>;
  for (const point of POINTS) points[point] = inOrder(bound(present, point));
  return {
    ...(points as unknown as Pick<RunHooks, Point>),
    received: receivedInOrder(bound(present, 'received')),
    finished: finishedInOrder(bound(present, 'finished')),
    suspend: firstApproval(bound(present, 'suspend')),
    execute: layersExecute(present),
  };
}

/** The layers' execute middleware as one chain, in registration order; each named by its function (before binding). */
function layersExecute(present: readonly CallHooks[]): Chain<ExecuteMiddleware> | undefined {
  const own = present.filter((hooks) => hooks.execute !== undefined);
  if (own.length === 0) return undefined;
  return {
    middleware: own.map((hooks) => hooks.execute!.bind(hooks)),
    names: own.map((hooks, i) => hooks.execute!.name || `layer.execute[${i}]`),
  };
}

/** Each layer's hook at `point`, bound: a layer may implement its hooks as methods of a class (the events layer does). */
function bound<K extends keyof CallHooks>(present: readonly CallHooks[], point: K): NonNullable<CallHooks[K]>[] {
  return present.flatMap((hooks) => {
    const hook = hooks[point] as ((...args: never[]) => unknown) | undefined;
    return hook === undefined ? [] : [hook.bind(hooks) as NonNullable<CallHooks[K]>];
  });
}

function inOrder(fns: readonly ((...args: never[]) => void)[]): (...args: never[]) => void {
  if (fns.length === 0) return NOTHING;
  if (fns.length === 1) return fns[0]!;
  return (...args: never[]) => {
    for (const fn of fns) fn(...args);
  };
}

/** Each layer's `received`; the first verdict settles the call before the next layer looks at it. */
function receivedInOrder(fns: readonly NonNullable<CallHooks['received']>[]): RunHooks['received'] {
  return (call) => {
    let settled = false;
    for (const fn of fns) {
      const verdict = fn(call);
      if (verdict !== undefined && !settled) {
        settled = true;
        call.settle(verdict);
      }
    }
  };
}

/** Each layer's `suspend`, in order, until one returns a pending approval; none (`undefined`): the call fails closed. */
function firstApproval(fns: readonly Suspend[]): Suspend {
  if (fns.length === 0) return NO_APPROVAL;
  if (fns.length === 1) return fns[0]!;
  return (call) => {
    let approval: PendingApproval | undefined;
    for (const fn of fns) if ((approval = fn(call)) !== undefined) break;
    return approval;
  };
}

/**
 * Each layer's `finished`, in order; once one returns a promise, the rest run after it resolved, and
 * the result is held until the last settled. A rejection skips the rest: the run errors.
 */
function finishedInOrder(fns: readonly Finished[]): Finished {
  if (fns.length === 0) return NOTHING;
  if (fns.length === 1) return fns[0]!;
  const from = (first: number, result: ToolResult): void | PromiseLike<void> => {
    for (let i = first; i < fns.length; i++) {
      const waiting = fns[i]!(result);
      if (waiting !== undefined) return waiting.then(() => from(i + 1, result));
    }
  };
  return (result) => from(0, result);
}
