import { brand } from '../../util/brand.js';

/**
 * Why a PostgreSQL journal could not be used (errors of PostgreSQL itself, such as a lost connection
 * in the middle of a statement or a permission refused, pass through as node-postgres's, whose `code`
 * is PostgreSQL's SQLSTATE):
 * - `connection_failed`: no connection could be made. The message names the host and port (never the
 *   password); `cause` is node-postgres's error (refused, timed out, authentication failed, …).
 * - `schema_missing`: with `createSchema: false`, the schema holds no journal tables, or tables of an
 *   older version: run `postgresJournalSchema(schema)` (as a role with DDL rights), or let the journal
 *   create them.
 * - `schema_too_new`: the schema was written by a newer toolstream, whose tables this one cannot read.
 *
 * The pipeline fails a turn whose journal throws one with `journal_failed` (the error as its cause):
 * no call is answered as if it had run, and the turn can be resumed once the database is back.
 *
 * @example
 * ```ts
 * try {
 *   await journal.read('conv-1/resp-1');
 * } catch (error) {
 *   if (error instanceof PostgresJournalError && error.code === 'connection_failed') console.error(error.message);
 * }
 * ```
 */
export class PostgresJournalError extends Error {
  static {
    brand(this, 'PostgresJournalError');
  }

  constructor(
    readonly code: 'connection_failed' | 'schema_missing' | 'schema_too_new',
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PostgresJournalError';
  }
}
