/**
 * `toolstream/postgres` — durable turns in the PostgreSQL an app already runs, shared by every app
 * server that reaches it. Needs node-postgres `pg` 8 (an optional peer dependency: `npm install pg@^8`).
 *
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { postgresJournal } from 'toolstream/postgres';
 *
 * const pipeline = createPipeline({ tools, journal: postgresJournal({ connectionString: process.env.DATABASE_URL! }), approvalSecret });
 * ```
 *
 * @packageDocumentation
 */
export { postgresJournal } from './postgresJournal.js';
export type { PostgresConnection, PostgresJournal, PostgresJournalOptions } from './postgresJournal.js';
export { postgresJournalSchema } from './schema.js';
export { PostgresJournalError } from './postgresJournalError.js';
