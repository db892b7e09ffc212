import type { Decision } from '../policy/types.js';
import type { JournaledResult, JournalEntry, PendingApproval } from './types.js';

/** What the journal says of one call, folded from its entries. */
export interface JournaledCall {
  readonly index: number;
  readonly id: string;
  readonly name: string;
  /** The arguments as the model sent them. */
  readonly args: unknown;
  /** Set when they were cut off: the call is resumed as incomplete, never run. */
  readonly incomplete: { readonly reason: string; readonly partialText: string } | undefined;
  decision: Decision | undefined;
  /** The admitted arguments, when decided. */
  admitted: unknown;
  pending: PendingApproval | undefined;
  answered: 'allowed-once' | 'rejected' | undefined;
  started: boolean;
  finished: JournaledResult | undefined;
}

/**
 * A turn's journal, folded: each call's latest state, by index. Entries of a call that was never
 * received (a store that lost them) are ignored; the journal is append-only, so later entries win.
 */
export function foldTurn(entries: readonly JournalEntry[]): Map<number, JournaledCall> {
  const calls = new Map<number, JournaledCall>();
  for (const entry of entries) {
    if (entry.kind === 'received') {
      calls.set(entry.index, {
        index: entry.index,
        id: entry.id,
        name: entry.name,
        args: entry.args,
        incomplete: entry.incomplete,
        decision: undefined,
        admitted: undefined,
        pending: undefined,
        answered: undefined,
        started: false,
        finished: undefined,
      });
      continue;
    }
    const call = calls.get(entry.index);
    if (call === undefined) continue;
    switch (entry.kind) {
      case 'decided':
        call.decision = entry.decision;
        call.admitted = entry.args;
        break;
      case 'approval_pending':
        call.pending = entry.approval;
        call.answered = undefined;
        break;
      case 'approval_answered':
        call.answered = entry.answer;
        break;
      case 'started':
        call.started = true;
        break;
      case 'finished':
        call.finished = entry.result;
        break;
    }
  }
  return calls;
}
