import { of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { BatchCancel } from '../../src/engine/records/batchCancel.js';
import { CallRecord } from '../../src/engine/records/callRecord.js';
import { concurrentStage, type StageScope } from '../../src/engine/chains/concurrentStage.js';
import type { AbortScope } from '../../src/types/abortScope.js';

const call = (id: string, turn: string) => {
  const record = new CallRecord(0, id, 'write_file', {}, 0);
  record.turn = turn;
  return record;
};

/** Subscribes a policy stage of `batch` to `record`, whose work never settles; returns its scope. */
function pending(batch: BatchCancel, record: CallRecord) {
  let scope: AbortScope | undefined;
  let stage: StageScope | undefined;
  const subscription = of(record)
    .pipe(
      concurrentStage(
        (r, s) => {
          stage = s;
          scope = batch.scopeFor(s, r);
          return new Promise<void>(() => undefined);
        },
        () => false,
        batch.signal,
      ),
    )
    .subscribe();
  return { scope: scope!, stage: stage!, subscription };
}

describe('BatchCancel: the scopes of calls in the policy stages', () => {
  it('cancelling everything reaches a waiting call through its stage first, then through its turn', () => {
    const batch = new BatchCancel();
    const { scope, stage, subscription } = pending(batch, call('c1', 'msg_1'));
    const heard: string[] = [];
    // Heard twice, once from each side; the stage had aborted by the first time.
    scope.onAbort(() => heard.push(`${stage.aborted}: ${(scope.reason as DOMException).message}`));
    batch.cancelAll({ reason: 'aborted', by: undefined });
    expect(heard).toEqual(['true: cancelled (aborted)', 'true: cancelled (aborted)']);
    subscription.unsubscribe();
  });

  it("a call's reason is its turn's while only the turn is cancelled, the stage's once the stage aborts", () => {
    const batch = new BatchCancel();
    const record = call('c1', 'msg_1');
    const { scope, subscription } = pending(batch, record);
    const other = pending(batch, call('c2', 'msg_2'));
    let heard = 0;
    scope.onAbort(() => heard++);
    expect(batch.cancelTurn('msg_1', { reason: 'sibling_failed', by: { id: 'c0', name: 'write_file' } })).toBe(true);
    expect(heard).toBe(1);
    expect(scope.aborted).toBe(true);
    expect(other.scope.aborted).toBe(false);
    expect((scope.reason as DOMException).message).toBe('cancelled (sibling_failed)');
    subscription.unsubscribe();
    expect((scope.reason as DOMException).message).toBe('the subscription ended');
    other.subscription.unsubscribe();
    expect(other.scope.aborted).toBe(true);
  });

  it('the stage scope keeps the first reason: the run aborting after the unsubscribe changes nothing', () => {
    const batch = new BatchCancel();
    const { stage, subscription } = pending(batch, call('c1', 'msg_1'));
    subscription.unsubscribe();
    batch.cancelAll({ reason: 'aborted', by: undefined });
    expect((stage.reason as DOMException).message).toBe('the subscription ended');
  });
});
