import type { JournalEntry, JournalStore, TurnLease } from '../types/journal.js';
import { checkKeyOfTurn, checkPruneOptions, endOf, mayPrune, turnOfKey } from './pruning.js';

/** A turn's lease as the store keeps it: the epoch stays when it is released (`owner` empty). */
interface HeldLease {
  readonly owner: string;
  readonly until: number;
  readonly epoch: number;
}

/**
 * A journal kept in this process's memory: durable turns that survive approvals answered later (by
 * another request to the same process), not a restart. For tests, and for one long-lived process.
 * Entries are copied as JSON data on append, as a real store would serialise them. `prune` walks every
 * turn kept (a store for one process holds few).
 *
 * @example
 * ```ts
 * const pipeline = createPipeline({ tools, journal: memoryJournal(), approvalSecret: process.env.APPROVAL_SECRET! });
 * ```
 */
export function memoryJournal(): JournalStore {
  /** By key: a turn's journal, or a program's (`turn NUL callId`). */
  const journals = new Map<string, JournalEntry[]>();
  /** By turn: the keys of its programs' journals. */
  const programs = new Map<string, Set<string>>();
  const leases = new Map<string, HeldLease>();
  /** By turn: its used nonces. */
  const used = new Map<string, Set<string>>();
  const current = (lease: TurnLease): boolean => {
    const held = leases.get(lease.turn);
    return held !== undefined && held.owner === lease.owner && held.epoch === lease.epoch;
  };
  return {
    append(key, entries, lease) {
      checkKeyOfTurn(key, lease.turn);
      // Every entry is copied before any is kept: an entry without a JSON form keeps none (all or none).
      const copies = entries.map((entry) => JSON.parse(JSON.stringify(entry)) as JournalEntry);
      if (copies.length === 0) return true;
      if (!current(lease)) return false;
      let journal = journals.get(key);
      if (journal === undefined) journals.set(key, (journal = []));
      for (const copy of copies) journal.push(copy);
      if (key !== lease.turn) programs.set(lease.turn, (programs.get(lease.turn) ?? new Set()).add(key));
      return true;
    },
    read(key) {
      return [...(journals.get(key) ?? [])];
    },
    acquire(turn, owner, ms) {
      const held = leases.get(turn);
      const now = Date.now();
      if (held !== undefined && held.owner !== '' && held.owner !== owner && held.until > now) return undefined;
      const epoch = (held?.epoch ?? 0) + 1;
      leases.set(turn, { owner, until: now + ms, epoch });
      return epoch;
    },
    renew(lease, ms) {
      if (!current(lease)) return false;
      leases.set(lease.turn, { owner: lease.owner, until: Date.now() + ms, epoch: lease.epoch });
      return true;
    },
    release(lease) {
      if (current(lease)) leases.set(lease.turn, { owner: '', until: 0, epoch: lease.epoch });
    },
    consume(turn, nonce) {
      let nonces = used.get(turn);
      if (nonces === undefined) used.set(turn, (nonces = new Set()));
      if (nonces.has(nonce)) return false;
      nonces.add(nonce);
      return true;
    },
    prune(options) {
      const resolved = checkPruneOptions(options);
      const now = Date.now();
      let removed = 0;
      for (const [key, journal] of journals) {
        if (turnOfKey(key) !== key) continue;
        const ended = endOf(journal);
        const held = leases.get(key);
        if (ended === undefined || !mayPrune(ended, resolved, now) || (held !== undefined && held.owner !== '' && held.until > now)) continue;
        for (const program of programs.get(key) ?? []) journals.delete(program);
        for (const map of [journals, programs, leases, used]) map.delete(key);
        removed++;
      }
      return removed;
    },
  };
}
