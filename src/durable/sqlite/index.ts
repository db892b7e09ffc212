/**
 * `toolstream/sqlite` — durable turns in a SQLite file, shared by the processes that open it. Needs
 * `better-sqlite3` 12 (an optional peer dependency: `npm install better-sqlite3@12`).
 *
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { sqliteJournal } from 'toolstream/sqlite';
 *
 * const pipeline = createPipeline({ tools, journal: sqliteJournal({ path: 'turns.db' }), approvalSecret });
 * ```
 *
 * @packageDocumentation
 */
export { sqliteJournal } from './sqliteJournal.js';
export type { SqliteJournal, SqliteJournalOptions, SqliteSynchronous } from './sqliteJournal.js';
export { SqliteJournalError } from './sqliteJournalError.js';
