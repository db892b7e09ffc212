import { quoted } from './schema.js';

/** The journal's tables in its schema, quoted, for SQL. */
export interface Tables {
  readonly appends: string;
  readonly leases: string;
  readonly usedNonces: string;
  readonly ended: string;
}

export const tablesOf = (schema: string): Tables => ({
  appends: `${quoted(schema)}.appends`,
  leases: `${quoted(schema)}.leases`,
  usedNonces: `${quoted(schema)}.used_nonces`,
  ended: `${quoted(schema)}.ended`,
});

/**
 * The clock leases expire on. The database's (`param()` is null: the SQL reads `now()`, the start of
 * its transaction), so app servers whose clocks disagree still agree on every lease; or, for the store
 * contract's tests, which move time by hand, a function of the process (`param()` is its value).
 * `process()` is this process's clock, for what was written on the processes' clocks (`ended.at`, the
 * approval tokens' expiry).
 */
export interface Clock {
  param(): number | null;
  process(): number;
}

export const DATABASE_CLOCK: Clock = { param: () => null, process: () => Date.now() };

/** SQL for "now" in epoch milliseconds: the clock given as parameter `$n`, else the database's. */
export const nowMs = (n: number): string => `COALESCE($${n}::float8, floor(extract(epoch FROM now()) * 1000)::float8)`;

/**
 * A key's turn and program: the call id after the turn's NUL ('' for the turn's own journal), its own
 * NUL characters and backslashes escaped (PostgreSQL's `text` holds no NUL; turn ids hold none).
 */
export function splitKey(key: string): { readonly turn: string; readonly program: string } {
  const nul = key.indexOf('\u0000');
  if (nul === -1) return { turn: key, program: '' };
  return { turn: key.slice(0, nul), program: `/${key.slice(nul + 1).replaceAll('\\', '\\\\').replaceAll('\u0000', '\\0')}` };
}

/**
 * The statements of the journal's methods: each one statement (its own transaction, no session state).
 * The fence: an append reads its lease row `FOR SHARE`, so a take-over (an `UPDATE` of that row) waits
 * for the append's transaction, and an append that waited for a take-over sees the new epoch and
 * inserts nothing — a stale owner's append is refused inside the transaction that would have written it.
 */
export function statementsOf(t: Tables) {
  const held = `SELECT 1 FROM ${t.leases} WHERE turn = $1 AND owner = $2 AND epoch = $3 FOR SHARE`;
  return {
    /** $1 turn, $2 owner, $3 epoch, $4 program, $5 entries: one row, or none. */
    append: `WITH held AS (${held}) INSERT INTO ${t.appends} (turn, program, entries) SELECT $1, $4, $5 FROM held`,
    /** As `append`, and lists the turn as ended ($6 at, $7 suspended until) in the same statement. */
    appendEnding: `WITH held AS (${held}),
      appended AS (INSERT INTO ${t.appends} (turn, program, entries) SELECT $1, $4, $5 FROM held RETURNING turn)
      INSERT INTO ${t.ended} (turn, at, suspended_until) SELECT turn, $6, $7 FROM appended
      ON CONFLICT (turn) DO UPDATE SET at = excluded.at, suspended_until = excluded.suspended_until`,
    read: `SELECT entries FROM ${t.appends} WHERE turn = $1 AND program = $2 ORDER BY seq`,
    /** $1 turn, $2 owner, $3 ms, $4 the clock: taken when nobody holds a live lease (or its owner takes it again). */
    acquire: `INSERT INTO ${t.leases} AS l (turn, owner, until, epoch) VALUES ($1, $2, ${nowMs(4)} + $3, 1)
      ON CONFLICT (turn) DO UPDATE SET owner = excluded.owner, until = excluded.until, epoch = l.epoch + 1
      WHERE l.owner = '' OR l.owner = excluded.owner OR l.until <= ${nowMs(4)}
      RETURNING epoch`,
    /** $1 turn, $2 owner, $3 epoch, $4 ms, $5 the clock. */
    renew: `UPDATE ${t.leases} SET until = ${nowMs(5)} + $4 WHERE turn = $1 AND owner = $2 AND epoch = $3`,
    release: `UPDATE ${t.leases} SET owner = '', until = 0 WHERE turn = $1 AND owner = $2 AND epoch = $3`,
    consume: `INSERT INTO ${t.usedNonces} (turn, nonce) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
  };
}
