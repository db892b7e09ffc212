import { defer, identity, tap, type MonoTypeOperatorFunction, type OperatorFunction } from 'rxjs';
import { resultChain } from './chains/resultChain.js';
import { BatchCancel } from './records/batchCancel.js';
import type { CallRecord } from './records/callRecord.js';
import type { RunHooks } from './chains/hooks.js';
import { executeCalls } from './stages/execute.js';
import { guard } from './stages/guard.js';
import { intake } from './stages/intake.js';
import { postExecute } from './stages/postExecute.js';
import { preExecute } from './stages/preExecute.js';
import { toResults } from './stages/result.js';
import type { ToolCall } from '../types/toolCall.js';
import type { ToolResult } from '../types/toolResult.js';
import type { PipelineSettings } from './settings.js';

/**
 * Where the journal of a durable turn works on the records between the stages, as operators: after
 * intake (`received`: it restores what a resume replays), after pre-execute (`decided`), after the
 * guard (`admitted`), and on the results (`finished`: it holds each until its entry is durable). The
 * stages know nothing of it. (To be replaced by hooks with verdicts and awaitable `finished`: issue 25.)
 */
export interface StageTaps {
  readonly received?: MonoTypeOperatorFunction<CallRecord>;
  readonly decided?: MonoTypeOperatorFunction<CallRecord>;
  readonly admitted?: MonoTypeOperatorFunction<CallRecord>;
  readonly finished?: MonoTypeOperatorFunction<ToolResult>;
}

/**
 * Every stage but the reordering: results come out as calls finish. Each subscription is a batch of
 * its own. (A program's sub-calls run through this, so a quick result is not held behind a slow one.)
 * It reads its calls to the end, aborted or not (each answered `cancelled` then): `stopWhenAborted` stops a source.
 * In the engine, not the composition root, so the layers that run stages themselves (durable turns,
 * programs' sub-calls) import it from below.
 *
 * @example
 * ```ts
 * calls$.pipe(runStages(settings, signal, {}, runHooks([eventHooks])), reorderByIndex()).subscribe(sendToModel);
 * ```
 *
 * `hooks` are called at each moment of each call (see `CallHooks`), after the taps at the same point:
 * the events layer reports what the journal restored.
 */
export function runStages(settings: PipelineSettings, signal: AbortSignal | undefined, taps: StageTaps = {}, hooks?: RunHooks): OperatorFunction<ToolCall, ToolResult> {
  return (calls) =>
    defer(() => {
      // Per subscription: the execute stage cancels the batch, the policy stages before it follow.
      const batch = new BatchCancel();
      const admitted = calls.pipe(
        intake(settings),
        tap(batch.received), // counted in: a turn stays cancelled while it has unfinished calls
        taps.received ?? identity,
        hooks === undefined ? identity : tap((record) => received(record, hooks)),
        preExecute(settings, batch),
        taps.decided ?? identity,
        hooks === undefined ? identity : tap<CallRecord>(hooks.decided),
        guard(settings, batch),
        taps.admitted ?? identity,
      );
      return admitted.pipe(
        executeCalls(settings, signal, batch),
        postExecute(settings, signal),
        resultChain(settings, signal),
        toResults(settings.observers, settings.onObserverError),
        taps.finished ?? identity,
        hooks === undefined ? identity : tap<ToolResult>(hooks.finished),
      );
    });
}

/** The record carries its run's hooks from here on, so the stages inside call them without being handed them. */
function received(record: CallRecord, hooks: RunHooks): void {
  record.hooks = hooks;
  hooks.received(record);
}
