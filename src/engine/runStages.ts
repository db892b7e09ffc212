import { defer, identity, tap, type MonoTypeOperatorFunction, type OperatorFunction } from 'rxjs';
import { BatchCancel } from './records/batchCancel.js';
import type { CallRecord } from './records/callRecord.js';
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
 * Where a layer over the stages (durable turns) watches the records go by: after intake (`received`),
 * after pre-execute (`decided`), after the guard (`admitted`), and the results (`finished`). The stages
 * know nothing of what watches them.
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
 * calls$.pipe(runStages(settings, signal, taps), reorderByIndex()).subscribe(sendToModel);
 * ```
 */
export function runStages(settings: PipelineSettings, signal: AbortSignal | undefined, taps: StageTaps = {}): OperatorFunction<ToolCall, ToolResult> {
  return (calls) =>
    defer(() => {
      // Per subscription: the execute stage cancels the batch, the policy stages before it follow.
      const batch = new BatchCancel();
      const admitted = calls.pipe(
        intake(settings),
        tap(batch.received), // counted in: a turn stays cancelled while it has unfinished calls
        taps.received ?? identity,
        preExecute(settings, batch),
        taps.decided ?? identity,
        guard(settings, batch),
        taps.admitted ?? identity,
      );
      return admitted.pipe(
        executeCalls(settings, signal, batch),
        postExecute(settings, signal),
        toResults(settings.observers, settings.onObserverError),
        taps.finished ?? identity,
      );
    });
}
