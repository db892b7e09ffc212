import type { PoolClient } from 'pg';
import { ConfigError } from '../../util/errors.js';
import { PostgresJournalError } from './postgresJournalError.js';

/**
 * The journal's tables in PostgreSQL, as plain SQL: `MIGRATIONS[v]` takes a schema from version `v` to
 * `v + 1`, and the `meta` table's `schema_version` row says where a schema is. A migration is only ever
 * appended here, never edited once released. `{s}` stands for the quoted schema name.
 *
 * Version 1 (toolstream 0.2, the JournalStore v2 contract):
 * - `appends`: one row per `append`, its entries as one JSON array (`text`, not `jsonb`: kept exactly as
 *   written, and `jsonb` refuses the `\u0000` escape an argument may hold), in the order appended
 *   (`seq`). A key is its turn and, for a program's journal (`turn NUL callId`), the call id in
 *   `program` ('' for the turn's own): PostgreSQL's `text` holds no NUL character.
 * - `leases`: who drives a turn, until when (epoch milliseconds on the clock the journal uses: the
 *   database's, by default), and its fencing epoch (kept when released: `owner` becomes '').
 * - `used_nonces`: the approvals consumed; its primary key makes consuming a compare-and-set.
 * - `ended`: the turns whose journal ended with an `ended` entry, and when — what `prune` looks at (it
 *   checks the turn's last append again before removing anything).
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE {s}.appends (
     seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     turn    text NOT NULL,
     program text NOT NULL DEFAULT '',
     entries text NOT NULL
   );
   CREATE INDEX appends_of_key ON {s}.appends (turn, program, seq);
   CREATE TABLE {s}.leases (
     turn  text PRIMARY KEY,
     owner text NOT NULL,
     until double precision NOT NULL,
     epoch bigint NOT NULL
   );
   CREATE TABLE {s}.used_nonces (
     turn  text NOT NULL,
     nonce text NOT NULL,
     PRIMARY KEY (turn, nonce)
   );
   CREATE TABLE {s}.ended (
     turn            text PRIMARY KEY,
     at              double precision NOT NULL,
     suspended_until double precision
   );
   CREATE INDEX ended_by_time ON {s}.ended (at);`,
];

/** The version this code reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The schema used when none is given. */
export const DEFAULT_SCHEMA = 'toolstream';

/**
 * A schema name the journal accepts: a letter or underscore, then letters, digits and underscores, 63
 * characters at most (PostgreSQL's limit), not starting with `pg_` (reserved). It is always quoted in
 * SQL, so its case is kept.
 */
export const SCHEMA_NAME = /^(?!pg_)[A-Za-z_][A-Za-z0-9_]{0,62}$/i;

/** What a `schema` option must be, as `postgresJournal` and `postgresJournalSchema` both say it. */
export const SCHEMA_EXPECTED = 'a name of letters, digits and underscores, 63 at most, not starting with a digit or pg_';

/** The schema name quoted as an identifier (it was checked against {@link SCHEMA_NAME}: no quote to double). */
export const quoted = (schema: string): string => `"${schema}"`;

const migration = (schema: string, from: number): string =>
  MIGRATIONS.slice(from)
    .map((sql) => sql.replaceAll('{s}', quoted(schema)))
    .join('\n');

const versionRow = (schema: string): string =>
  `INSERT INTO ${quoted(schema)}.meta (key, value) VALUES ('schema_version', ${SCHEMA_VERSION}) ON CONFLICT (key) DO UPDATE SET value = excluded.value;`;

/**
 * The SQL that creates the journal's schema and tables (at the version this toolstream writes) in `schema`, for a
 * database administrator to run once when the journal's own role may not create tables — then open the
 * journal with `createSchema: false`. Run it in one transaction (`psql --single-transaction -f`). The
 * journal's role needs `USAGE` on the schema and `SELECT, INSERT, UPDATE, DELETE` on its tables.
 *
 * @throws {ConfigError} (option `schema`) for a schema name the journal would refuse, as
 *   `postgresJournal` does.
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { postgresJournalSchema } from 'toolstream/postgres';
 *
 * writeFileSync('journal.sql', postgresJournalSchema('agents'));
 * // psql --single-transaction -f journal.sql "$DATABASE_URL"
 * ```
 */
export function postgresJournalSchema(schema: string = DEFAULT_SCHEMA): string {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) throw new ConfigError('postgresJournalSchema', 'schema', SCHEMA_EXPECTED, schema);
  return [
    `CREATE SCHEMA IF NOT EXISTS ${quoted(schema)};`,
    `CREATE TABLE ${quoted(schema)}.meta (key text PRIMARY KEY, value integer NOT NULL);`,
    migration(schema, 0),
    versionRow(schema),
    '',
  ].join('\n');
}

/** The schema's version: 0 when it holds no journal (no schema, or no `meta` table). */
async function versionOf(client: PoolClient, schema: string): Promise<number> {
  const meta = await client.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [`${quoted(schema)}.meta`]);
  if (meta.rows[0]?.found !== true) return 0;
  const row = await client.query<{ value: number }>(`SELECT value FROM ${quoted(schema)}.meta WHERE key = 'schema_version'`);
  return row.rows[0]?.value ?? 0;
}

const tooNew = (schema: string, version: number) =>
  new PostgresJournalError('schema_too_new', `the PostgreSQL schema ${quoted(schema)} holds a journal of schema version ${version}; this toolstream reads version ${SCHEMA_VERSION} at most: upgrade toolstream.`);

/**
 * Brings `schema` to {@link SCHEMA_VERSION} (`create`), or checks that it is there (`!create`). Creating
 * runs in one transaction under a transaction-scoped advisory lock on the schema's name, so app servers
 * starting at once wait for each other and the first creates the tables; a schema already current is
 * only read (a role without DDL rights can open it with `createSchema` left on). No session state: the
 * lock ends with the transaction (PgBouncer in transaction mode is fine).
 * @throws {PostgresJournalError} `schema_too_new`; `schema_missing` when `!create` and it is not current.
 */
export async function ensureSchema(client: PoolClient, schema: string, create: boolean): Promise<void> {
  if (!create) {
    const version = await versionOf(client, schema);
    if (version > SCHEMA_VERSION) throw tooNew(schema, version);
    if (version < SCHEMA_VERSION) {
      throw new PostgresJournalError(
        'schema_missing',
        `the PostgreSQL schema ${quoted(schema)} holds ${version === 0 ? 'no journal tables' : `a journal of schema version ${version}, older than this toolstream's ${SCHEMA_VERSION}`}, and createSchema is false: run the SQL of postgresJournalSchema(${JSON.stringify(schema)}) as a role that may create tables, or open the journal with createSchema: true.`,
      );
    }
    return;
  }
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`toolstream journal schema ${schema}`]);
    const version = await versionOf(client, schema);
    if (version > SCHEMA_VERSION) throw tooNew(schema, version);
    if (version < SCHEMA_VERSION) {
      const start = version === 0 ? [`CREATE SCHEMA IF NOT EXISTS ${quoted(schema)};`, `CREATE TABLE ${quoted(schema)}.meta (key text PRIMARY KEY, value integer NOT NULL);`] : [];
      await client.query([...start, migration(schema, version), versionRow(schema)].join('\n'));
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
