import type { JournalEntry, PruneOptions } from '../../types/journal.js';
import { checkPruneOptions, endOf, mayPrune } from '../pruning.js';
import type { Connection } from './connection.js';
import type { Clock } from './statements.js';
import { nowMs, type Tables } from './statements.js';

/**
 * `prune` of a PostgreSQL journal. The `ended` table lists the turns that ended, with when; for each one
 * old enough, one transaction locks the turn's lease row (an append, which takes it `FOR SHARE`, and an
 * `acquire` wait meanwhile), checks the turn again — its last append still ends with that `ended` entry
 * (a resume since would have appended more), its lease is not live on the journal's clock, its suspended
 * calls' tokens (if any, and if asked) expired on this process's clock (the clock the tokens were
 * signed with) — and deletes its appends (with its programs'), used nonces, lease and listing in one
 * statement. A turn listed but running again is unlisted: its next `ended` lists it again.
 */
export function postgresPrune(connection: Connection, t: Tables, clock: Clock): (options: PruneOptions) => Promise<number> {
  const pruneTurn = (turn: string, options: Required<PruneOptions>, now: number) =>
    connection.use(async (client) => {
      await client.query('BEGIN');
      try {
        const lease = await client.query<{ live: boolean }>(`SELECT owner <> '' AND until > ${nowMs(2)} AS live FROM ${t.leases} WHERE turn = $1 FOR UPDATE`, [turn, clock.param()]);
        const last = await client.query<{ entries: string }>(`SELECT entries FROM ${t.appends} WHERE turn = $1 AND program = '' ORDER BY seq DESC LIMIT 1`, [turn]);
        const text = last.rows[0]?.entries;
        const ended = text === undefined ? undefined : endOf(JSON.parse(text) as JournalEntry[]);
        let removed = false;
        if (ended === undefined) {
          await client.query(`DELETE FROM ${t.ended} WHERE turn = $1`, [turn]);
        } else if (mayPrune(ended, options, now) && lease.rows[0]?.live !== true) {
          await client.query(
            `WITH a AS (DELETE FROM ${t.appends} WHERE turn = $1), n AS (DELETE FROM ${t.usedNonces} WHERE turn = $1), l AS (DELETE FROM ${t.leases} WHERE turn = $1)
             DELETE FROM ${t.ended} WHERE turn = $1`,
            [turn],
          );
          removed = true;
        }
        await client.query('COMMIT');
        return removed;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });

  return async (options) => {
    const resolved = checkPruneOptions(options);
    const now = clock.process();
    const candidates = await connection.use((client) => client.query<{ turn: string }>(`SELECT turn FROM ${t.ended} WHERE at < $1 ORDER BY at`, [resolved.finishedBefore]));
    let removed = 0;
    for (const { turn } of candidates.rows) if (await pruneTurn(turn, resolved, now)) removed++;
    return removed;
  };
}
