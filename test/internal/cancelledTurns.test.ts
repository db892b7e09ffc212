import { describe, expect, it } from 'vitest';
import { CancelledTurns, RECENT_CANCELLED_TURNS } from '../../src/engine/records/cancelledTurns.js';
import { CallRecord } from '../../src/engine/records/callRecord.js';

const failing = (id: string) => new CallRecord(0, id, 'write_file', { path: 'x'.repeat(1_000) }, 0);

/** Cancels `count` turns `prefix0…` that each had one call, now answered: they are over. */
function endCancelledTurns(turns: CancelledTurns, prefix: string, count: number): void {
  for (let i = 0; i < count; i++) {
    turns.received(`${prefix}${i}`);
    turns.cancel(`${prefix}${i}`, { reason: 'sibling_failed', by: failing(`${prefix}${i}`) });
    turns.answered(`${prefix}${i}`);
  }
}

describe('CancelledTurns: how long a turn stays cancelled', () => {
  it('cancels a turn once, keeping who cancelled it but not the failing record', () => {
    const turns = new CancelledTurns();
    const by = failing('w1');
    expect(turns.cancel('msg_1', { reason: 'sibling_failed', by })).toBe(true);
    expect(turns.cancel('msg_1', { reason: 'cancel_requested', by: failing('w2') })).toBe(false);
    expect(turns.get('msg_1')).toEqual({ reason: 'sibling_failed', by: { id: 'w1', name: 'write_file' } });
    expect(turns.get('msg_1')!.by).not.toBe(by);
    expect(turns.get('msg_2')).toBeUndefined();
  });

  it('never forgets a turn that has an unfinished call, however many turns end cancelled meanwhile', () => {
    const turns = new CancelledTurns();
    turns.received('slow'); // a call of it still in a policy, an approval or the pool
    turns.received('slow');
    turns.cancel('slow', { reason: 'sibling_failed', by: failing('w') });
    turns.answered('slow'); // the failing call; one unfinished call is left
    endCancelledTurns(turns, 't', 3 * RECENT_CANCELLED_TURNS);
    expect(turns.get('slow')?.reason).toBe('sibling_failed');
    turns.answered('slow'); // over now: remembered among the recent ones, then forgotten
    endCancelledTurns(turns, 'u', RECENT_CANCELLED_TURNS - 1);
    expect(turns.get('slow')?.reason).toBe('sibling_failed');
    endCancelledTurns(turns, 'v', 1);
    expect(turns.get('slow')).toBeUndefined();
  });

  it('remembers the last 1,000 turns that are over; a straggler makes its turn unfinished again, then recent', () => {
    const turns = new CancelledTurns();
    endCancelledTurns(turns, 't', RECENT_CANCELLED_TURNS);
    expect(turns.get('t0')).toBeDefined();
    turns.received('t0'); // a straggler of t0: cancelled (the caller sees `get`), unfinished until answered
    endCancelledTurns(turns, 'u', RECENT_CANCELLED_TURNS);
    expect(turns.get('t0')).toBeDefined(); // not forgotten while unfinished
    expect(turns.get('t1')).toBeUndefined(); // 1,000 turns ended after it
    turns.answered('t0');
    endCancelledTurns(turns, 'v', RECENT_CANCELLED_TURNS - 1);
    expect(turns.get('t0')).toBeDefined();
    endCancelledTurns(turns, 'w', 1);
    expect(turns.get('t0')).toBeUndefined();
  });

  it('a turn whose stragglers keep coming keeps its place among the recent ones (its old places are compacted away)', () => {
    const turns = new CancelledTurns();
    endCancelledTurns(turns, 't', 10);
    for (let i = 0; i < 100_000; i++) {
      turns.received('t0'); // a straggler: unfinished again…
      turns.answered('t0'); // …and over again, now the most recent
    }
    endCancelledTurns(turns, 'u', RECENT_CANCELLED_TURNS - 10);
    for (let i = 0; i < 10; i++) expect(turns.get(`t${i}`)).toBeDefined();
    endCancelledTurns(turns, 'v', 1);
    expect(turns.get('t1')).toBeUndefined(); // the oldest ending now
    expect(turns.get('t0')).toBeDefined();
  });

  it('the anonymous turn is the subscription: once cancelled it stays so', () => {
    const turns = new CancelledTurns();
    turns.received(undefined);
    turns.cancel(undefined, { reason: 'cancel_requested', by: failing('s') });
    turns.answered(undefined);
    endCancelledTurns(turns, 't', 2 * RECENT_CANCELLED_TURNS);
    expect(turns.get(undefined)?.reason).toBe('cancel_requested');
  });

  it('calls never counted in (a pool used without the stages): the turn is over once cancelled', () => {
    const turns = new CancelledTurns();
    turns.cancel('msg_1', { reason: 'sibling_failed', by: failing('w') });
    turns.answered('msg_1');
    turns.answered('msg_1');
    endCancelledTurns(turns, 't', RECENT_CANCELLED_TURNS - 1);
    expect(turns.get('msg_1')).toBeDefined();
    endCancelledTurns(turns, 'u', 1);
    expect(turns.get('msg_1')).toBeUndefined();
  });
});
