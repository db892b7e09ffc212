import { brand } from '../../util/brand.js';

/**
 * Why `sqliteJournal` could not open its file (errors of SQLite itself pass through as better-sqlite3's
 * `SqliteError`, whose `code` is SQLite's, e.g. `SQLITE_BUSY`):
 * - `schema_too_new`: the file was written by a newer toolstream, whose schema this one cannot read.
 * - `wal_unavailable`: SQLite could not put the file in WAL mode (a file system without shared memory,
 *   such as some network mounts): the journal's guarantees across processes would not hold.
 *
 * @example
 * ```ts
 * try {
 *   journal = sqliteJournal({ path: 'turns.db' });
 * } catch (error) {
 *   if (error instanceof SqliteJournalError && error.code === 'schema_too_new') console.error('upgrade toolstream');
 * }
 * ```
 */
export class SqliteJournalError extends Error {
  static {
    brand(this, 'SqliteJournalError');
  }

  constructor(
    readonly code: 'schema_too_new' | 'wal_unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'SqliteJournalError';
  }
}
