import type { JournalEntry, JournalStore } from './types.js';

/**
 * A journal kept in this process's memory: durable turns that survive approvals answered later (by
 * another request to the same process), not a restart. For tests, and for one long-lived process.
 * Entries are copied as JSON data on append, as a real store would serialise them.
 *
 * @example
 * ```ts
 * const pipeline = createPipeline({ tools, journal: memoryJournal(), approvalSecret: process.env.APPROVAL_SECRET! });
 * ```
 */
export function memoryJournal(): JournalStore {
  const turns = new Map<string, JournalEntry[]>();
  const leases = new Map<string, { readonly owner: string; readonly until: number }>();
  const used = new Set<string>();
  return {
    append(turn, entries) {
      // Every entry is copied before any is kept: an entry without a JSON form keeps none (all or none).
      const copies = entries.map((entry) => JSON.parse(JSON.stringify(entry)) as JournalEntry);
      let journal = turns.get(turn);
      if (journal === undefined) turns.set(turn, (journal = []));
      for (const copy of copies) journal.push(copy);
    },
    read(turn) {
      return [...(turns.get(turn) ?? [])];
    },
    lease(turn, owner, ms) {
      const held = leases.get(turn);
      const now = Date.now();
      if (held !== undefined && held.owner !== owner && held.until > now) return false;
      leases.set(turn, { owner, until: now + ms });
      return true;
    },
    release(turn, owner) {
      if (leases.get(turn)?.owner === owner) leases.delete(turn);
    },
    consume(turn, nonce) {
      const key = `${turn}\n${nonce}`;
      if (used.has(key)) return false;
      used.add(key);
      return true;
    },
  };
}
