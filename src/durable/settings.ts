import type { JournalStore } from '../types/journal.js';
import type { ApprovalTokens, TokenClaims } from './approvalTokens.js';
import type { JournaledCall } from './turnState.js';

/** A pipeline's durability settings, resolved from its options. */
export interface DurableSettings {
  readonly store: JournalStore;
  readonly tokens: ApprovalTokens;
  readonly approvalTtlMs: number;
  readonly leaseMs: number;
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
