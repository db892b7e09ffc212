import type { Decision } from '../types/decision.js';
import type { JournaledResult, JournalEntry } from '../types/journal.js';
import type { PendingApproval } from '../types/pendingApproval.js';

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
  /** The approvals of sub-calls its program stopped on, when it is a program that did. */
  program: ProgramApprovals | undefined;
}

/**
 * The approvals a program's call journaled for its sub-calls. Each run of the program journals every
 * approval it stopped on when it stops, so the latest run's set is what the program waits for; a run
 * that journaled none (it is running, or its process stopped first) leaves the set of the run before.
 */
export interface ProgramApprovals {
  /** Journaled since the program's latest start. */
  latest: PendingApproval[];
  /** The last set journaled before that start. */
  before: PendingApproval[];
  /** Tokens whose approval was answered (consumed), and how. */
  readonly answered: Map<string, 'allowed-once' | 'rejected'>;
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
        program: undefined,
      });
      continue;
    }
    if (entry.kind === 'ended') continue; // the turn's, not a call's
    const call = calls.get(entry.index);
    if (call === undefined) continue;
    switch (entry.kind) {
      case 'decided':
        call.decision = entry.decision;
        call.admitted = entry.args;
        break;
      case 'approval_pending':
        // A sub-call's approval (`<call id>#<n>`) on its program's call. (In a program's own journal a
        // slot's approval may name the position it was made at in a later run: it is the slot's own.)
        if (entry.approval.callId.startsWith(`${call.id}#`)) {
          programApprovals(call).latest.push(entry.approval);
          break;
        }
        call.pending = entry.approval;
        call.answered = undefined;
        break;
      case 'approval_answered':
        if (entry.token !== undefined) programApprovals(call).answered.set(entry.token, entry.answer);
        else call.answered = entry.answer;
        break;
      case 'started':
        call.started = true;
        if (call.program !== undefined && call.program.latest.length > 0) {
          call.program.before = call.program.latest;
          call.program.latest = [];
        }
        break;
      case 'finished':
        call.finished = entry.result;
        break;
    }
  }
  return calls;
}

function programApprovals(call: JournaledCall): ProgramApprovals {
  return (call.program ??= { latest: [], before: [], answered: new Map() });
}

/**
 * The sub-call approvals a program's call waits for: its latest run's set (else the set before),
 * without those answered; none once the call finished.
 */
export function openProgramApprovals(call: JournaledCall): readonly PendingApproval[] {
  const { program } = call;
  if (program === undefined || call.finished !== undefined) return [];
  const set = program.latest.length > 0 ? program.latest : program.before;
  return set.filter((approval) => !program.answered.has(approval.token));
}

/** Every approval a turn waits for, in call order (a program's call: its own, then its sub-calls'). */
export function openApprovals(journaled: ReadonlyMap<number, JournaledCall>): PendingApproval[] {
  return [...journaled.values()]
    .sort((a, b) => a.index - b.index)
    .flatMap((call) => [...(call.finished === undefined && call.answered === undefined && call.pending !== undefined ? [call.pending] : []), ...openProgramApprovals(call)]);
}
