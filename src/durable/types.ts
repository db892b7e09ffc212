// The types live in types/, the leaf room; this path re-exports them for its importers.
export type { ApprovalResponse, PendingApproval } from '../types/pendingApproval.js';
export type { CallEntry, JournaledResult, JournalEntry, JournalStore, PruneOptions, TurnEnded, TurnLease } from '../types/journal.js';
