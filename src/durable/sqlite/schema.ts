import type Database from 'better-sqlite3';
import { SqliteJournalError } from './sqliteJournalError.js';

/**
 * The journal's schema, as plain SQL: `MIGRATIONS[v]` takes a file from version `v` to `v + 1`, and
 * the `meta` table's `schema_version` says where a file is. A migration is only ever appended here,
 * never edited once released.
 *
 * Version 1:
 * - `appends`: one row per `append`, its entries as one JSON array, in the order appended (`seq`, one
 *   sequence across turns; a turn's rows are found through `appends_of_turn`). A row per append, not
 *   per entry: an append is then a single INSERT, atomic by itself, and takes a third of the time
 *   (measured: 38 µs per 20-entry append instead of 114 µs, `synchronous = NORMAL`).
 * - `leases`: who drives a turn, until when (epoch milliseconds).
 * - `used_nonces`: the approvals consumed, one row each; its primary key makes consuming a
 *   compare-and-set.
 *
 * Version 2 (toolstream 0.2: fencing and pruning):
 * - `leases.epoch`: grows by one with each take of the turn; kept when the lease is released (`owner`
 *   becomes ''), so a process whose lease was taken over can never write again. Rows of version 1
 *   start at epoch 0.
 * - `ended`: the turns whose journal ended with an `ended` entry, and when — what `prune` looks at
 *   (it checks the turn's last append again before removing anything).
 */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE appends (
     seq     INTEGER PRIMARY KEY,
     turn    TEXT NOT NULL,
     entries TEXT NOT NULL
   ) STRICT;
   CREATE INDEX appends_of_turn ON appends (turn, seq);
   CREATE TABLE leases (
     turn  TEXT PRIMARY KEY,
     owner TEXT NOT NULL,
     until INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;
   CREATE TABLE used_nonces (
     turn  TEXT NOT NULL,
     nonce TEXT NOT NULL,
     PRIMARY KEY (turn, nonce)
   ) STRICT, WITHOUT ROWID;`,
  `ALTER TABLE leases ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE ended (
     turn            TEXT PRIMARY KEY,
     at              INTEGER NOT NULL,
     suspended_until INTEGER
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX ended_by_time ON ended (at);`,
];

/** The version this code reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the file to {@link SCHEMA_VERSION}, in one write transaction: processes opening a new file
 * at once wait for each other (`busy_timeout`), and the first creates the schema.
 * @throws {SqliteJournalError} `schema_too_new` for a file written by a newer toolstream.
 */
export function migrate(db: Database.Database, path: string): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT, WITHOUT ROWID');
    const found = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get() as number | undefined;
    const version = found ?? 0;
    if (version > SCHEMA_VERSION) {
      throw new SqliteJournalError('schema_too_new', `${path} holds a journal of schema version ${version}; this toolstream reads version ${SCHEMA_VERSION} at most: upgrade toolstream.`);
    }
    for (const sql of MIGRATIONS.slice(version)) db.exec(sql);
    if (version < SCHEMA_VERSION) {
      db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(SCHEMA_VERSION);
    }
  }).immediate();
}
