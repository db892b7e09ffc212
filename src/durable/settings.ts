import type { SchedulerLike } from 'rxjs';
import type { JournalStore } from '../types/journal.js';
import type { ApprovalTokens, TokenClaims } from './approvalTokens.js';
import type { LeaseKeeper } from './leaseKeeper.js';
import type { JournaledCall } from './turnState.js';

/** A pipeline's durability settings, resolved from its options. */
export interface DurableSettings {
  readonly store: JournalStore;
  readonly tokens: ApprovalTokens;
  readonly approvalTtlMs: number;
  readonly leaseMs: number;
  /**
   * The pipeline's scheduler: the lease's renewal rounds run on it (virtual time in a marble test).
   * Expiries kept in the store, journal times and approval tokens stay on the wall clock.
   */
  readonly scheduler: SchedulerLike;
}

/** An answer given to a resume, its token checked: what it answers, and how. */
export interface GivenAnswer {
  readonly answer: 'allowed-once' | 'rejected';
  readonly claims: TokenClaims;
  readonly token: string;
}

/**
 * What a resume brings: the turn's journal, folded, and the answers given, by call index — those for
 * sub-calls of a program by its call's index (its program matches them to its sub-calls).
 */
export interface ResumePlan {
  readonly journaled: ReadonlyMap<number, JournaledCall>;
  readonly answers: ReadonlyMap<number, GivenAnswer>;
  readonly programAnswers: ReadonlyMap<number, readonly GivenAnswer[]>;
  /** How many entries the journal held when it was read: more once the lease is taken means stale. */
  readonly entries: number;
}

/**
 * Where a batch of a program's sub-calls is journaled (see `ProgramJournal`): under the program's own
 * key, each sub-call at the slot it was bound to; its approvals name the program's call in the turn,
 * and the turn's journal learns when one is answered.
 */
export interface SubBatchScope {
  /** The key the sub-calls are journaled under. */
  readonly key: string;
  /** The slot (journal index) of the sub-call the program made `position`-th. */
  slotOf(position: number): number;
  /** The index of the program's call in the turn. */
  readonly callIndex: number;
  /** A sub-call's approval (`token`) was answered with `answer`: the turn's journal records it. */
  answered(token: string, answer: 'allowed-once' | 'rejected'): void;
  /** The turn's lease, which the program's call holds: it fences the sub-calls' writes too. */
  readonly lease: LeaseKeeper;
}
