import Database from 'better-sqlite3';
import { ConfigError } from '../../util/errors.js';
import { isPositiveDuration, isRecord, MAX_TIMER_MS } from '../../util/validate.js';
import type { JournalEntry, JournalStore, PruneOptions, TurnLease } from '../../types/journal.js';
import { checkKeyOfTurn } from '../pruning.js';
import { migrate } from './schema.js';
import { sqlitePrune } from './sqlitePrune.js';
import { SqliteJournalError } from './sqliteJournalError.js';

/**
 * How hard SQLite works to keep a commit, with the file in WAL mode (see the README, "The SQLite
 * journal", for the figures behind the default):
 * - `'normal'`: a commit is written to the WAL file (the operating system's cache) before `append`
 *   returns, and synced to the disk at checkpoints. Every commit survives the process dying at any
 *   moment (`SIGKILL`, a crash, an out-of-memory kill); a power loss or an operating-system crash may
 *   lose the last commits (never corrupt the file, never keep half of one).
 * - `'full'`: each commit is also synced to the disk (`fsync`) before `append` returns, so it survives
 *   a power loss or an operating-system crash too. Costs one sync per commit.
 *
 * @example
 * ```ts
 * const synchronous: SqliteSynchronous = process.env.JOURNAL_SYNC === 'full' ? 'full' : 'normal';
 * const journal = sqliteJournal({ path: 'turns.db', synchronous });
 * ```
 */
export type SqliteSynchronous = 'normal' | 'full';

/**
 * Options of {@link sqliteJournal}.
 *
 * @example
 * ```ts
 * const options: SqliteJournalOptions = { path: '/var/lib/agent/turns.db', synchronous: 'full' };
 * ```
 */
export interface SqliteJournalOptions {
  /**
   * The database file, created with its schema when absent (its directory must exist). Processes that
   * share turns open the same file — on a local disk: SQLite's locking does not hold on network file
   * systems.
   */
  readonly path: string;
  /**
   * What a commit survives: the process dying (`'normal'`), or also a power loss (`'full'`).
   * @default 'normal'
   */
  readonly synchronous?: SqliteSynchronous;
  /**
   * How long a write waits for another process's write to end before it fails with `SQLITE_BUSY`
   * (SQLite's `busy_timeout`), 1 to 2³¹−1 ms. The wait blocks this thread (better-sqlite3 is
   * synchronous); the journal's writes are single short statements, so waits are short too.
   * @default 5000
   */
  readonly busyTimeoutMs?: number;
}

/**
 * The journal `sqliteJournal` returns: a {@link JournalStore} whose methods are synchronous, and what
 * it was opened with.
 *
 * @example
 * ```ts
 * const journal: SqliteJournal = sqliteJournal({ path: 'turns.db' });
 * console.log(journal.read('conv-1/resp-1').length);
 * journal.close();
 * ```
 */
export interface SqliteJournal extends JournalStore {
  /** The database file. */
  readonly path: string;
  /** What a commit survives. */
  readonly synchronous: SqliteSynchronous;
  append(key: string, entries: readonly JournalEntry[], lease: TurnLease): boolean;
  read(key: string): JournalEntry[];
  acquire(turn: string, owner: string, ms: number): number | undefined;
  renew(lease: TurnLease, ms: number): boolean;
  release(lease: TurnLease): void;
  consume(turn: string, nonce: string): boolean;
  prune(options: PruneOptions): number;
  /** Closes the database. The journal cannot be used after. */
  close(): void;
}

/**
 * A journal in a SQLite file (through `better-sqlite3` 12, an optional peer dependency): durable turns
 * that survive the process, shared by every process that opens the same file — a web server's
 * requests answered by other workers, a resume after a crash or a deploy.
 *
 * The file is in WAL mode: readers never wait, and a write waits for another process's write
 * (`busyTimeoutMs`) instead of failing. `append` is one statement (one row: all its entries or none),
 * which inserts only while the lease it carries is the turn's current one; taking, renewing and
 * releasing a lease and consuming an approval are single statements too, atomic across processes.
 * `prune` removes each turn in a transaction of its own, so writers wait at most one turn's delete. A
 * process killed at any moment leaves the file intact, and every `append` that returned is kept
 * (with `synchronous: 'full'`, through a power loss as well).
 *
 * @throws {ConfigError} for bad options. {@link SqliteJournalError} for a file of a newer schema or
 *   without WAL; better-sqlite3's `SqliteError` when the file cannot be opened.
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { sqliteJournal } from 'toolstream/sqlite';
 *
 * const journal = sqliteJournal({ path: 'turns.db' });
 * const pipeline = createPipeline({ tools, journal, approvalSecret: process.env.APPROVAL_SECRET! });
 * const results = await pipeline.run(calls, { turn: `${conversationId}/${responseId}` });
 * ```
 */
export function sqliteJournal(options: SqliteJournalOptions): SqliteJournal {
  const { path, synchronous, busyTimeoutMs } = resolveOptions(options);
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    // WAL first: a file is put in WAL mode once and stays so; `synchronous` is per connection.
    if (db.pragma('journal_mode = WAL', { simple: true }) !== 'wal') {
      throw new SqliteJournalError('wal_unavailable', `SQLite could not put ${path} in WAL mode; keep the journal on a local disk.`);
    }
    db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    migrate(db, path);
  } catch (error) {
    db.close();
    throw error;
  }

  // One statement: the row goes in only while the lease is the turn's current one (the fence).
  const insertAppend = db.prepare<[{ key: string; entries: string; turn: string; owner: string; epoch: number }]>(
    `INSERT INTO appends (turn, entries) SELECT @key, @entries
     WHERE EXISTS (SELECT 1 FROM leases WHERE turn = @turn AND owner = @owner AND epoch = @epoch)`,
  );
  const markEnded = db.prepare<[{ turn: string; at: number; until: number | null }]>(
    'INSERT INTO ended (turn, at, suspended_until) VALUES (@turn, @at, @until) ON CONFLICT (turn) DO UPDATE SET at = excluded.at, suspended_until = excluded.suspended_until',
  );
  const selectAppends = db.prepare<[string], string>('SELECT entries FROM appends WHERE turn = ? ORDER BY seq').pluck();
  // Taken when nobody holds a live lease (or its owner takes it again): the epoch grows by one.
  const takeLease = db.prepare<[{ turn: string; owner: string; until: number; now: number }], { epoch: number }>(
    `INSERT INTO leases (turn, owner, until, epoch) VALUES (@turn, @owner, @until, 1)
     ON CONFLICT (turn) DO UPDATE SET owner = excluded.owner, until = excluded.until, epoch = leases.epoch + 1
     WHERE leases.owner = '' OR leases.owner = excluded.owner OR leases.until <= @now
     RETURNING epoch`,
  );
  const renewLease = db.prepare<[{ turn: string; owner: string; epoch: number; until: number }]>('UPDATE leases SET until = @until WHERE turn = @turn AND owner = @owner AND epoch = @epoch');
  const dropLease = db.prepare<[TurnLease]>("UPDATE leases SET owner = '', until = 0 WHERE turn = @turn AND owner = @owner AND epoch = @epoch");
  const useNonce = db.prepare<[string, string]>('INSERT INTO used_nonces (turn, nonce) VALUES (?, ?) ON CONFLICT DO NOTHING');
  // Appending a turn's `ended` entry also lists the turn for prune, in the same transaction.
  const appendEnding = db.transaction((fenced: { key: string; entries: string; turn: string; owner: string; epoch: number }, ended: { at: number; suspendedUntil?: number }) => {
    if (insertAppend.run(fenced).changes !== 1) return false;
    markEnded.run({ turn: fenced.turn, at: ended.at, until: ended.suspendedUntil ?? null });
    return true;
  });
  const prune = sqlitePrune(db);

  return Object.freeze({
    path,
    synchronous,
    append(key: string, entries: readonly JournalEntry[], lease: TurnLease): boolean {
      checkKeyOfTurn(key, lease.turn);
      // One row, one statement: all of the entries or none (serialised first: one without a JSON form writes nothing).
      const json = JSON.stringify(entries);
      if (entries.length === 0) return true;
      const fenced = { key, entries: json, turn: lease.turn, owner: lease.owner, epoch: lease.epoch };
      const last = entries[entries.length - 1]!;
      if (last.kind === 'ended' && key === lease.turn) return appendEnding.immediate(fenced, last);
      return insertAppend.run(fenced).changes === 1;
    },
    read(key: string): JournalEntry[] {
      return selectAppends.all(key).flatMap((text) => JSON.parse(text) as JournalEntry[]);
    },
    acquire(turn: string, owner: string, ms: number): number | undefined {
      const now = Date.now();
      return takeLease.get({ turn, owner, until: now + ms, now })?.epoch;
    },
    renew(lease: TurnLease, ms: number): boolean {
      return renewLease.run({ turn: lease.turn, owner: lease.owner, epoch: lease.epoch, until: Date.now() + ms }).changes === 1;
    },
    release(lease: TurnLease): void {
      dropLease.run({ turn: lease.turn, owner: lease.owner, epoch: lease.epoch });
    },
    consume(turn: string, nonce: string): boolean {
      return useNonce.run(turn, nonce).changes === 1;
    },
    prune,
    close(): void {
      db.close();
    },
  });
}

/** The options, checked eagerly, with defaults. */
function resolveOptions(options: SqliteJournalOptions): Required<SqliteJournalOptions> {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('sqliteJournal', option, expected, received);
  };
  if (!isRecord(options)) fail('options', 'an object ({ path })', options);
  const { path, synchronous = 'normal', busyTimeoutMs = 5_000 } = options;
  if (typeof path !== 'string' || path === '' || path === ':memory:') fail('path', 'the path of a database file (for a journal in memory, use memoryJournal())', path);
  if (synchronous !== 'normal' && synchronous !== 'full') fail('synchronous', "'normal' or 'full'", synchronous);
  if (!isPositiveDuration(busyTimeoutMs) || !Number.isInteger(busyTimeoutMs)) fail('busyTimeoutMs', `an integer from 1 to ${MAX_TIMER_MS} (milliseconds)`, busyTimeoutMs);
  return { path, synchronous, busyTimeoutMs };
}
