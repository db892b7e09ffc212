import pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import { PostgresJournalError } from './postgresJournalError.js';
import { ensureSchema } from './schema.js';

/**
 * Where a journal's statements go: a pool (the caller's, or one of the journal's own), the schema made
 * sure of once, before the first statement, and every failure to connect turned into a
 * `connection_failed` that names the host and port (never the password).
 */
export interface Connection {
  /** Runs `work` on a client of the pool, after the schema was made sure of; the client is released after. */
  use<T>(work: (client: PoolClient) => Promise<T>): Promise<T>;
  /** Ends the pool if the journal made it (once); a pool given stays the caller's. */
  close(): Promise<void>;
}

/** How long the journal's own pool waits for a new connection before the first use fails. */
const CONNECT_TIMEOUT_MS = 10_000;

export function openConnection(given: { readonly pool: Pool } | { readonly connectionString: string }, schema: string, createSchema: boolean): Connection {
  const owned = !('pool' in given);
  const pool: Pool = owned ? new pg.Pool({ connectionString: given.connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, allowExitOnIdle: true }) : given.pool;
  // An idle client whose server went away emits on the pool; without a listener node-postgres would
  // crash the process. The statements that need a connection fail on their own (connection_failed).
  if (owned) pool.on('error', () => undefined);
  const where = serverOf(owned ? { connectionString: given.connectionString } : pool.options);
  let ready: Promise<void> | undefined;
  let closing: Promise<void> | undefined;

  const connect = async (): Promise<PoolClient> => {
    try {
      return await pool.connect();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new PostgresJournalError('connection_failed', `the PostgreSQL journal could not connect to ${where}: ${reason}`, { cause: error });
    }
  };
  const run = async <T>(work: (client: PoolClient) => Promise<T>): Promise<T> => {
    const client = await connect();
    let broken: Error | undefined;
    try {
      return await work(client);
    } catch (error) {
      // A connection-level failure (no SQLSTATE, not one of ours) leaves the client unusable: the pool drops it.
      if (error instanceof Error && !(error instanceof PostgresJournalError) && typeof (error as { severity?: unknown }).severity !== 'string') broken = error;
      throw error;
    } finally {
      client.release(broken);
    }
  };

  return {
    async use(work) {
      // Made sure of once; a failure (the database down) is tried again at the next use.
      ready ??= run((client) => ensureSchema(client, schema, createSchema)).catch((error: unknown) => {
        ready = undefined;
        throw error;
      });
      await ready;
      return run(work);
    },
    close() {
      if (!owned) return Promise.resolve();
      closing ??= pool.end();
      return closing;
    },
  };
}

/**
 * `host:port` of the server the pool connects to, for messages, as node-postgres resolves it (the
 * connection string, then `PGHOST` and `PGPORT`, then its defaults): read from a client made and never
 * connected. The user name and password are never part of it.
 */
function serverOf(options: pg.PoolConfig): string {
  const { host, port } = new pg.Client(options);
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}
