import type Database from 'better-sqlite3';
import type { JournalEntry, PruneOptions } from '../../types/journal.js';
import { checkPruneOptions, endOf, mayPrune } from '../pruning.js';

/**
 * `prune` of a SQLite journal. The `ended` table lists the turns that ended, with when; for each one
 * old enough, one write transaction checks the turn again — its last append still ends with that
 * `ended` entry (a resume since would have appended more), its lease is not live, its suspended calls'
 * tokens (if any, and if asked) expired — and deletes its appends, its programs' appends (keys
 * `turn NUL callId`: the range from `turn NUL` to `turn \u0001`), used nonces, lease and listing.
 * A turn listed but running again is unlisted: its next `ended` lists it again.
 */
export function sqlitePrune(db: Database.Database): (options: PruneOptions) => number {
  const candidates = db.prepare<[number], string>('SELECT turn FROM ended WHERE at < ? ORDER BY at').pluck();
  const lastAppend = db.prepare<[string], string>('SELECT entries FROM appends WHERE turn = ? ORDER BY seq DESC LIMIT 1').pluck();
  const leaseOf = db.prepare<[string], { owner: string; until: number }>('SELECT owner, until FROM leases WHERE turn = ?');
  const unlist = db.prepare<[string]>('DELETE FROM ended WHERE turn = ?');
  const deletes = [
    db.prepare<[{ turn: string; from: string; to: string }]>('DELETE FROM appends WHERE turn = @turn OR (turn >= @from AND turn < @to)'),
    db.prepare<[{ turn: string }]>('DELETE FROM used_nonces WHERE turn = @turn'),
    db.prepare<[{ turn: string }]>('DELETE FROM leases WHERE turn = @turn'),
    db.prepare<[{ turn: string }]>('DELETE FROM ended WHERE turn = @turn'),
  ];
  const pruneTurn = db.transaction((turn: string, options: Required<PruneOptions>, now: number): boolean => {
    const text = lastAppend.get(turn);
    const ended = text === undefined ? undefined : endOf(JSON.parse(text) as JournalEntry[]);
    if (ended === undefined) {
      unlist.run(turn);
      return false;
    }
    const lease = leaseOf.get(turn);
    if (!mayPrune(ended, options, now) || (lease !== undefined && lease.owner !== '' && lease.until > now)) return false;
    const range = { turn, from: `${turn}\u0000`, to: `${turn}\u0001` };
    for (const statement of deletes) statement.run(range);
    return true;
  });
  return (options) => {
    const resolved = checkPruneOptions(options);
    const now = Date.now();
    let removed = 0;
    for (const turn of candidates.all(resolved.finishedBefore)) if (pruneTurn.immediate(turn, resolved, now)) removed++;
    return removed;
  };
}
