import { randomBytes } from 'node:crypto';
import { Redis, type Cluster, type RedisOptions } from 'ioredis';
import { checkKeyOfTurn, checkPruneOptions } from '../durable/pruning.js';
import { ConfigError } from '../util/errors.js';
import { isRecord } from '../util/validate.js';
import type { AsyncJournalStore, JournalEntry, JournalStore, PruneOptions, TurnLease } from '../types/journal.js';
import { ACQUIRE, APPEND, PRUNE, RELEASE, RENEW, runScript } from './redisJournalScripts.js';

/**
 * Options of {@link redisJournal}.
 *
 * @example
 * ```ts
 * const options: RedisJournalOptions = { connection: process.env.REDIS_URL!, prefix: 'agent-eu:journal' };
 * ```
 */
export interface RedisJournalOptions {
  /**
   * The Redis to keep turns in: a URL (`redis://host:6379/0`, `rediss://…` for TLS), ioredis options,
   * or an ioredis client — a `Redis`, or a `Cluster` for a Redis Cluster. A URL or options make a client
   * of the journal's own, which `close()` quits; a client you pass stays yours: `close()` leaves it
   * open, and you quit it.
   */
  readonly connection: string | RedisOptions | Redis | Cluster;
  /**
   * The start of every key the journal writes: a turn's keys are `<prefix>:{<turn>}:log`, `:lease`,
   * `:nonces`, `:programs` and, for each program (`run_code`) call, `:program:<call id>` (the turn is the
   * hash tag, so a turn's keys share one slot); `<prefix>:ended` lists the turns that ended, for `prune`.
   * Journals of different prefixes on one Redis never see each other's turns.
   *
   * On a Redis Cluster no hash tag is needed: every script and multi-key command of the journal touches
   * one turn's keys, which share the turn's slot, so turns spread over the masters (`<prefix>:ended` is
   * only ever used alone). A prefix may carry one hash tag (`'{journal}'`, `'app:{journal}'`), which then
   * puts every key of the journal in that one slot, on one master; any other `{` or `}` is refused.
   * @default 'toolstream:journal'
   */
  readonly prefix?: string;
}

/**
 * The journal `redisJournal` returns: an {@link AsyncJournalStore} (its methods return promises) and its
 * key prefix.
 *
 * @example
 * ```ts
 * const journal: RedisJournal = redisJournal({ connection: 'redis://127.0.0.1:6379' });
 * console.log(journal.prefix, (await journal.read('conv-1/resp-1')).length);
 * await journal.close();
 * ```
 */
export interface RedisJournal extends AsyncJournalStore {
  /** The start of every key the journal writes. */
  readonly prefix: string;
  /** Quits the client the journal made (waiting for its replies); a client you passed stays open. */
  close(): Promise<void>;
}

/**
 * A journal in Redis (through `ioredis` 5, an optional peer dependency): durable turns shared by every
 * agent process on every machine that reaches the same Redis — a turn suspended on one server is
 * resumed, and its approvals answered, on another; a turn whose process died is resumed elsewhere.
 *
 * How each method holds across processes:
 * - `append` is one command (a Lua script around one `RPUSH` of the batch as one JSON array): all its
 *   entries or none, never interleaved with another append, and only while the lease it carries is the
 *   turn's current one (owner and epoch, checked in the script). Entries are serialised first, so a
 *   batch without a JSON form writes nothing. An append ioredis resends after a reconnect is kept once.
 * - `read` is one `LRANGE`: a read never sees part of an append.
 * - `acquire`, `renew` and `release` are compare-and-sets in Lua on the turn's owner, expiry and epoch
 *   (see `JournalStore`: each take gives a higher epoch; the epoch stays when released). Expiry is on the **caller's
 *   clock** (`Date.now()` of the process taking the lease), the clock the pipeline reasons with and
 *   the other stores use: the agents' clocks must agree to well within `leaseMs` (30 s by default; NTP
 *   keeps servers within milliseconds). Redis's own clock was not chosen: the lease would then expire
 *   on a clock the pipeline cannot read, and a process could not tell how long its lease has left.
 * - `consume` is one `SADD` to the turn's set of used nonces: true for the one caller that added it.
 *   (A set per turn rather than a key per nonce: one key to find and delete with the turn.)
 *   A `SADD` resent after a reconnect answers false: the approval is refused (`token_used`), never run twice.
 *
 * **Durability.** An `append` that resolved is in the Redis server's memory. It survives that server
 * crashing, or restarting, only if Redis persists every write before it answers: configure
 * `appendonly yes` with `appendfsync always` (each write synced to disk first). With
 * `appendfsync everysec` (Redis's default once AOF is on) up to a second of appends is lost in a crash
 * of the machine; with RDB snapshots alone, or no persistence, everything since the last snapshot. A
 * lost append can make a body that started look never started — then a resume runs it again. Redis
 * replication is asynchronous: a replica promoted after a failover may lack the latest appends. `WAIT`
 * (and, from Redis 7.2, `WAITAOF`) makes a client wait until replicas have a write, which narrows that
 * window but does not close it (Redis does not promise a failover picks a replica that has it); this
 * journal does not call them.
 *
 * **Pruning.** Appending a turn's `ended` entry lists the turn in `<prefix>:ended` (a sorted set, by
 * time); `prune` walks the listed turns old enough and removes each in one script that checks it again
 * (still ended, lease not live, tokens expired if it ended suspended). Turns journaled by toolstream 0.1
 * keep the journals of programs that never ran again under 0.2 (`<prefix>:{<turn>\u0000<call id>}:log`):
 * delete those by pattern if you need to.
 *
 * Commands wait while the client reconnects, then fail as ioredis says (by default after 20 attempts,
 * about 10 s); the pipeline fails the turn with `journal_failed`, and the turn can be resumed later.
 *
 * @throws {ConfigError} for bad options (checked at once; the connection is made in the background).
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { redisJournal } from 'toolstream/bullmq';
 *
 * const journal = redisJournal({ connection: process.env.REDIS_URL! });
 * const pipeline = createPipeline({ tools, journal, approvalSecret: process.env.APPROVAL_SECRET! });
 * const results = await pipeline.run(calls, { turn: `${conversationId}/${responseId}` });
 * // … in another process, later:
 * await pipeline.resume(turn, { answers: [{ token, answer: 'allowed-once' }] });
 * ```
 */
export function redisJournal(options: RedisJournalOptions): RedisJournal {
  const { connection, prefix } = resolveOptions(options);
  const owned = !isClient(connection);
  const redis: Redis | Cluster = owned ? (typeof connection === 'string' ? new Redis(connection) : new Redis(connection)) : connection;
  if (owned) {
    // The client's own errors (refused, reset) arrive with the commands they fail; without a listener
    // ioredis would also print each one.
    redis.on('error', () => undefined);
  }
  const keys = (turn: string) => {
    const base = `${prefix}:{${turn}}`;
    return { log: `${base}:log`, lease: `${base}:lease`, nonces: `${base}:nonces`, programs: `${base}:programs`, program: (callId: string) => `${base}:program:${callId}` };
  };
  /** Where a key's journal is: a turn's log, or a program's (and where toolstream 0.1 kept it). */
  const logOf = (key: string) => {
    const nul = key.indexOf('\u0000');
    if (nul === -1) return { turn: key, callId: '', log: keys(key).log, legacy: undefined };
    const turn = key.slice(0, nul);
    const callId = key.slice(nul + 1);
    return { turn, callId, log: keys(turn).program(callId), legacy: `${prefix}:{${key}}:log` };
  };
  const ended = `${prefix}:ended`;
  // An append's id: this journal's, and a count (see APPEND).
  const journalId = randomBytes(9).toString('base64url');
  let appends = 0;
  let closing: Promise<void> | undefined;
  const parse = (elements: readonly string[]): JournalEntry[] =>
    // Each element is `id \n json` (JSON.stringify never writes a raw newline).
    elements.flatMap((element) => JSON.parse(element.slice(element.indexOf('\n') + 1)) as JournalEntry[]);

  return Object.freeze({
    prefix,
    async append(key: string, entries: readonly JournalEntry[], lease: TurnLease): Promise<boolean> {
      checkKeyOfTurn(key, lease.turn);
      // Serialised before anything is sent: one entry without a JSON form writes nothing.
      const json = JSON.stringify(entries);
      if (entries.length === 0) return true;
      const { turn, callId, log } = logOf(key);
      const last = entries[entries.length - 1]!;
      // Listed before the append (a listing whose append was refused is found and dropped by prune).
      if (last.kind === 'ended' && callId === '') await redis.zadd(ended, last.at, turn);
      const { lease: leaseKey, programs } = keys(turn);
      const id = `${journalId}.${(appends++).toString(36)}\n`;
      return (await runScript(redis, APPEND, [log, leaseKey, programs], [id, json, lease.owner, lease.epoch, callId])) !== -1;
    },
    async read(key: string): Promise<JournalEntry[]> {
      const { log, legacy } = logOf(key);
      if (legacy === undefined) return parse(await redis.lrange(log, 0, -1));
      // A program's journal begun by toolstream 0.1 is under its old key: that part first.
      const [before, after] = await Promise.all([redis.lrange(legacy, 0, -1), redis.lrange(log, 0, -1)]);
      return [...parse(before), ...parse(after)];
    },
    async acquire(turn: string, owner: string, ms: number): Promise<number | undefined> {
      const now = Date.now();
      const epoch = Number(await runScript(redis, ACQUIRE, [keys(turn).lease], [owner, now, now + ms]));
      return epoch === -1 ? undefined : epoch;
    },
    async renew(lease: TurnLease, ms: number): Promise<boolean> {
      return (await runScript(redis, RENEW, [keys(lease.turn).lease], [lease.owner, lease.epoch, Date.now() + ms])) === 1;
    },
    async release(lease: TurnLease): Promise<void> {
      await runScript(redis, RELEASE, [keys(lease.turn).lease], [lease.owner, lease.epoch]);
    },
    async consume(turn: string, nonce: string): Promise<boolean> {
      return (await redis.sadd(keys(turn).nonces, nonce)) === 1;
    },
    async prune(options: PruneOptions): Promise<number> {
      const { finishedBefore, suspended } = checkPruneOptions(options);
      const now = Date.now();
      let removed = 0;
      for (let offset = 0; ; ) {
        const listed = await redis.zrangebyscore(ended, '-inf', `(${finishedBefore}`, 'LIMIT', offset, PRUNE_PAGE);
        for (const turn of listed) {
          const turnKeys = keys(turn);
          const callIds = await redis.smembers(turnKeys.programs);
          const all = [turnKeys.log, turnKeys.lease, turnKeys.nonces, turnKeys.programs, ...callIds.map(turnKeys.program)];
          const outcome = Number(await runScript(redis, PRUNE, all, [finishedBefore, now, suspended]));
          if (outcome === -2) {
            offset++; // stays listed: the next page starts after it
            continue;
          }
          await redis.zrem(ended, turn);
          if (outcome !== 1) continue;
          removed++;
          // Programs journaled by toolstream 0.1 under keys of their own slot: one command each.
          for (const callId of callIds) await redis.del(`${prefix}:{${turn}\u0000${callId}}:log`);
        }
        if (listed.length < PRUNE_PAGE) return removed;
      }
    },
    close(): Promise<void> {
      if (!owned) return Promise.resolve();
      // QUIT waits for the replies of the commands before it; a client not connected just disconnects.
      closing ??= redis.status === 'ready' ? redis.quit().then(() => undefined, () => redis.disconnect()) : Promise.resolve(redis.disconnect());
      return closing;
    },
  });
}

/** How many listed turns one round of `prune` reads. */
const PRUNE_PAGE = 500;

/** A prefix with no brace, or one hash tag: `{`, a non-empty name without braces, `}`. */
const ONE_TAG_AT_MOST = /^[^{}]*(\{[^{}]+\}[^{}]*)?$/;

/** An ioredis client (a `Redis` or a `Cluster`) rather than its options: it has the commands. */
function isClient(connection: RedisJournalOptions['connection']): connection is Redis | Cluster {
  return typeof connection === 'object' && typeof (connection as Partial<Redis>).evalsha === 'function' && typeof (connection as Partial<Redis>).lrange === 'function';
}

/** The options, checked eagerly, with defaults. */
function resolveOptions(options: RedisJournalOptions): Required<RedisJournalOptions> {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('redisJournal', option, expected, received);
  };
  if (!isRecord(options)) fail('options', 'an object ({ connection })', options);
  const { connection, prefix = 'toolstream:journal' } = options;
  const expected = 'a redis:// or rediss:// URL, ioredis options, or an ioredis client';
  if (typeof connection === 'string') {
    let protocol: string | undefined;
    try {
      protocol = new URL(connection).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'redis:' && protocol !== 'rediss:') fail('connection', expected, connection);
  } else if (!isRecord(connection)) {
    fail('connection', expected, connection);
  } else if (!isClient(connection)) {
    const { host, port } = connection as RedisOptions;
    if (host !== undefined && (typeof host !== 'string' || host === '')) fail('connection.host', 'a host name or address', host);
    if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65_535)) fail('connection.port', 'a port number, 1 to 65535', port);
  }
  if (typeof prefix !== 'string' || prefix === '' || !ONE_TAG_AT_MOST.test(prefix)) fail('prefix', 'a non-empty string without { or }, or with one hash tag (e.g. \'{journal}\')', prefix);
  return { connection, prefix };
}
