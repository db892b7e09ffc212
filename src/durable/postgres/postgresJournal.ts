import type { Pool } from 'pg';
import type { AsyncJournalStore, JournalEntry, TurnLease } from '../../types/journal.js';
import { checkKeyOfTurn } from '../pruning.js';
import { ConfigError } from '../../util/errors.js';
import { isRecord } from '../../util/validate.js';
import { openConnection } from './connection.js';
import { postgresPrune } from './postgresPrune.js';
import { DEFAULT_SCHEMA, SCHEMA_EXPECTED, SCHEMA_NAME } from './schema.js';
import { DATABASE_CLOCK, splitKey, statementsOf, tablesOf, type Clock } from './statements.js';

/**
 * The PostgreSQL {@link postgresJournal} keeps turns in: a node-postgres `Pool` of yours (it stays yours:
 * `close()` leaves it open, and you end it), or a connection string (`postgres://user:password@host:5432/db`),
 * from which the journal makes a pool of its own that `close()` ends.
 *
 * @example
 * ```ts
 * const database: PostgresConnection = { connectionString: process.env.DATABASE_URL! };
 * ```
 */
export type PostgresConnection = { readonly pool: Pool } | { readonly connectionString: string };

/**
 * Options of {@link postgresJournal}.
 *
 * @example
 * ```ts
 * const options: PostgresJournalOptions = { schema: 'agents', createSchema: false };
 * ```
 */
export interface PostgresJournalOptions {
  /**
   * The schema the journal's tables are in: letters, digits and underscores, 63 characters at most, not
   * starting with a digit or `pg_` (quoted in SQL, so its case is kept). Journals of different schemas
   * in one database never see each other's turns.
   * @default 'toolstream'
   */
  readonly schema?: string;
  /**
   * Whether the journal creates its schema and tables at its first use when they are missing (under an
   * advisory lock, so app servers starting at once create them once). `false` creates nothing: the
   * tables must have been made from {@link postgresJournalSchema}'s SQL, else the first use fails
   * `schema_missing` — for a role without DDL rights.
   * @default true
   */
  readonly createSchema?: boolean;
}

/**
 * The journal `postgresJournal` returns: an {@link AsyncJournalStore} (its methods return promises) and its schema.
 *
 * @example
 * ```ts
 * const journal: PostgresJournal = postgresJournal({ connectionString: process.env.DATABASE_URL! });
 * console.log(journal.schema, (await journal.read('conv-1/resp-1')).length);
 * await journal.close();
 * ```
 */
export interface PostgresJournal extends AsyncJournalStore {
  /** The schema the journal's tables are in. */
  readonly schema: string;
  /** Ends the pool the journal made (after its statements); a pool you passed stays open. */
  close(): Promise<void>;
}

/**
 * A journal in PostgreSQL (through node-postgres `pg` 8, an optional peer dependency): durable turns
 * shared by every app server that reaches the same database — a turn suspended on one server is resumed,
 * and its approvals answered, on another; a turn whose process died is resumed elsewhere; and the turns
 * are backed up with the rest of the database.
 *
 * It returns at once and connects at its first use, which also creates the schema and tables if they
 * are missing (see {@link PostgresJournalOptions.createSchema}). A first use that cannot connect fails
 * with a `PostgresJournalError` (`connection_failed`) naming the host and port, never the password; the
 * pipeline fails the turn `journal_failed`, and nothing is answered as if it had run.
 *
 * How each method holds across processes — every one is a single statement, its own transaction:
 * - `append` inserts one row (all its entries or none) only while the lease it carries is the turn's
 *   current one, reading the lease row `FOR SHARE`: a take-over waits for it, and it waits for a
 *   take-over and then inserts nothing. An append is durable once it resolved (PostgreSQL's commit).
 * - `acquire`, `renew` and `release` are compare-and-sets on the lease row (`INSERT … ON CONFLICT DO
 *   UPDATE … WHERE`). Leases expire on the **database's clock** (`now()`), so app servers whose clocks
 *   disagree still agree on who holds a turn.
 * - `consume` inserts the nonce under a primary key: true for the one caller that inserted it.
 * - `prune` removes each turn in a transaction of its own (see the README).
 *
 * No session state — no `SET`, no `LISTEN`, no named prepared statements, no temporary tables, locks
 * only for a transaction — so it works through PgBouncer in transaction mode.
 *
 * @throws {ConfigError} for bad options (checked at once).
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { postgresJournal } from 'toolstream/postgres';
 *
 * const journal = postgresJournal({ connectionString: process.env.DATABASE_URL! }, { schema: 'agents' });
 * const pipeline = createPipeline({ tools, journal, approvalSecret: process.env.APPROVAL_SECRET! });
 * const results = await pipeline.run(calls, { turn: `${conversationId}/${responseId}` });
 * ```
 */
export function postgresJournal(connection: PostgresConnection, options: PostgresJournalOptions = {}): PostgresJournal {
  return openPostgresJournal(connection, options, DATABASE_CLOCK);
}

/**
 * {@link postgresJournal} on a given clock: the store contract's tests move time by hand (`Date.now`),
 * which the database's clock does not follow. Not exported from `toolstream/postgres`.
 * @internal
 */
export function openPostgresJournal(connection: PostgresConnection, options: PostgresJournalOptions, clock: Clock): PostgresJournal {
  const { schema, createSchema } = resolveOptions(connection, options);
  const db = openConnection(connection, schema, createSchema);
  const t = tablesOf(schema);
  const sql = statementsOf(t);
  const prune = postgresPrune(db, t, clock);
  const count = async (text: string, values: readonly unknown[]) => (await db.use((client) => client.query(text, [...values]))).rowCount ?? 0;

  return Object.freeze({
    schema,
    async append(key: string, entries: readonly JournalEntry[], lease: TurnLease): Promise<boolean> {
      checkKeyOfTurn(key, lease.turn);
      // Serialised before anything is sent: one entry without a JSON form writes nothing.
      const json = JSON.stringify(entries);
      if (entries.length === 0) return true;
      const { program } = splitKey(key);
      const fence = [lease.turn, lease.owner, lease.epoch, program, json];
      const last = entries[entries.length - 1]!;
      if (last.kind === 'ended' && program === '') return (await count(sql.appendEnding, [...fence, last.at, last.suspendedUntil ?? null])) === 1;
      return (await count(sql.append, fence)) === 1;
    },
    async read(key: string): Promise<JournalEntry[]> {
      const { turn, program } = splitKey(key);
      const { rows } = await db.use((client) => client.query<{ entries: string }>(sql.read, [turn, program]));
      return rows.flatMap((row) => JSON.parse(row.entries) as JournalEntry[]);
    },
    async acquire(turn: string, owner: string, ms: number): Promise<number | undefined> {
      const { rows } = await db.use((client) => client.query<{ epoch: string }>(sql.acquire, [turn, owner, ms, clock.param()]));
      return rows[0] === undefined ? undefined : Number(rows[0].epoch);
    },
    async renew(lease: TurnLease, ms: number): Promise<boolean> {
      return (await count(sql.renew, [lease.turn, lease.owner, lease.epoch, ms, clock.param()])) === 1;
    },
    async release(lease: TurnLease): Promise<void> {
      await count(sql.release, [lease.turn, lease.owner, lease.epoch]);
    },
    async consume(turn: string, nonce: string): Promise<boolean> {
      return (await count(sql.consume, [turn, nonce])) === 1;
    },
    prune,
    close: () => db.close(),
  });
}

/** The options, checked eagerly, with defaults. */
function resolveOptions(connection: PostgresConnection, options: PostgresJournalOptions): Required<PostgresJournalOptions> {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('postgresJournal', option, expected, received);
  };
  if (!isRecord(connection)) fail('connection', 'an object: { pool } or { connectionString }', connection);
  if ('pool' in connection) {
    const { pool } = connection as { pool: unknown };
    if (!isRecord(pool) || typeof (pool as Partial<Pool>).connect !== 'function' || typeof (pool as Partial<Pool>).query !== 'function') fail('pool', 'a node-postgres Pool (new pg.Pool(…))', pool);
  } else {
    const { connectionString } = connection as { connectionString?: unknown };
    let protocol: string | undefined;
    try {
      protocol = typeof connectionString === 'string' ? new URL(connectionString).protocol : undefined;
    } catch {
      protocol = undefined;
    }
    // Never the string itself in the error: it may hold a password.
    if (protocol !== 'postgres:' && protocol !== 'postgresql:') fail('connectionString', 'a postgres:// or postgresql:// URL', typeof connectionString === 'string' ? '(a string that is not one)' : connectionString);
  }
  if (!isRecord(options)) fail('options', 'an object ({ schema?, createSchema? })', options);
  const { schema = DEFAULT_SCHEMA, createSchema = true } = options;
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) fail('schema', SCHEMA_EXPECTED, schema);
  if (typeof createSchema !== 'boolean') fail('createSchema', 'true or false', createSchema);
  return { schema, createSchema };
}
