import { defer, identity, tap, type OperatorFunction } from 'rxjs';
import { awaitEach } from '../stream/awaitEach.js';
import { resultChain } from './chains/resultChain.js';
import { BatchCancel } from './records/batchCancel.js';
import type { CallRecord } from './records/callRecord.js';
import type { RunHooks } from './chains/hooks.js';
import { executeCalls } from './stages/execute.js';
import type { BatchOptions } from './pool/batchOptions.js';
import { reorderIn } from './stages/reorder.js';
import { ReorderWindow } from '../stream/reorderWindow.js';
import { guard } from './stages/guard.js';
import { intake } from './stages/intake.js';
import { postExecute } from './stages/postExecute.js';
import { preExecute } from './stages/preExecute.js';
import { toResults } from './stages/result.js';
import type { ToolCall } from '../types/toolCall.js';
import type { ToolResult } from '../types/toolResult.js';
import type { PipelineSettings, StageSettings } from './settings.js';

/**
 * Every stage but the reordering: results come out as calls finish. Each subscription is a batch of
 * its own. (A program's sub-calls run through this, so a quick result is not held behind a slow one.)
 * It reads its calls to the end, aborted or not (each answered `cancelled` then): `stopWhenAborted` stops a source.
 * In the engine, not the composition root, so the layers that run stages themselves (durable turns,
 * programs' sub-calls) import it from below.
 *
 * @example
 * ```ts
 * calls$.pipe(runStages(settings, signal, runHooks([journalHooks, eventHooks]))).subscribe(onResult); // completion order
 * ```
 *
 * `hooks` are called at each moment of each call (see `CallHooks`): a `received` verdict settles the
 * call before any policy, and a `finished` promise holds its result until it settled — a rejection
 * errors the run. Without hooks none of this is in the pipe.
 *
 * `options` are the pool's for this batch (`BatchOptions`): a pipeline's own runs leave them out; a
 * batch run inside a call (a program's sub-calls) says what a cancel-rest reaches and when it completes.
 * `window` is the reorder window after these stages (`runInOrder`), which the pool's `maxPending`
 * reads; without one nothing reorders the results, none waits, and `maxPending` holds nothing back.
 */
export function runStages(
  settings: StageSettings,
  signal: AbortSignal | undefined,
  hooks?: RunHooks,
  options?: BatchOptions,
  window?: ReorderWindow<ToolResult>,
): OperatorFunction<ToolCall, ToolResult> {
  return (calls) =>
    defer(() => {
      // Per subscription: the execute stage cancels the batch, the policy stages before it follow.
      const batch = new BatchCancel();
      const admitted = calls.pipe(
        intake(settings),
        tap(batch.received), // counted in: a turn stays cancelled while it has unfinished calls
        hooks === undefined ? identity : tap((record) => received(record, hooks)),
        preExecute(settings, batch),
        hooks === undefined ? identity : tap<CallRecord>(hooks.decided),
        guard(settings, batch),
      );
      return admitted.pipe(
        executeCalls(settings, signal, batch, options, window),
        postExecute(settings, signal),
        resultChain(settings, signal),
        toResults(settings.observers, settings.onObserverError),
        // Synchronous while every layer's `finished` is: a promise holds only its own result.
        hooks === undefined ? identity : awaitEach<ToolResult>(hooks.finished),
      );
    });
}

/**
 * Every stage, results in model order: `runStages` and the reorder after it, sharing one
 * `ReorderWindow` per subscription — the reorder's buffer, from which the pool's `maxPending` is
 * answered, counting the results on their way between the two (post policies, the result chain, a
 * layer's `finished`).
 *
 * @example
 * ```ts
 * calls$.pipe(runInOrder(settings, signal, runHooks([eventHooks]))).subscribe(sendToModel); // results in model order
 * ```
 */
export function runInOrder(settings: PipelineSettings, signal: AbortSignal | undefined, hooks?: RunHooks): OperatorFunction<ToolCall, ToolResult> {
  return (calls) =>
    defer(() => {
      const window = new ReorderWindow<ToolResult>(settings.maxPending);
      return calls.pipe(runStages(settings, signal, hooks, undefined, window), reorderIn(window));
    });
}

/** The record carries its run's hooks from here on, so the stages inside call them without being handed them; a layer's verdict settles it now. */
function received(record: CallRecord, hooks: RunHooks): void {
  record.hooks = hooks;
  hooks.received(record);
}
