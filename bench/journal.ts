/**
 * Journal bench: what making a turn durable costs, per store and durability setting, through the real
 * pipeline (`pipeline.run(calls, { turn })`).
 *
 * Workloads (no-op parallel calls `{ x: i }`, concurrency 10, as in the overhead bench):
 * 1. 10-call turns, one after another, each a new turn: the time per turn, and what the journal adds
 *    to it (target from issue 12: ≤ 10 ms). The baseline is the same pipeline without a journal.
 * 2. A 100k-call stream, one durable turn: calls/s (target ≥ 20k/s) and the ratio to the same run
 *    without a journal. `synchronous: 'full'` syncs once per commit, and Redis and PostgreSQL answer
 *    each append over a socket, so their streams are 10k calls (the rate is what matters; 100k would
 *    take minutes).
 * 3. Resuming a 1,000-call turn: 999 calls finished and one suspended on its approval; resume answers
 *    it, replays the 999 from the journal and runs the one (this pipeline has `askTools` and
 *    `suspendApprovals()`; the others have no policies, so the journal is their only difference).
 *
 * Stores: memoryJournal(), sqliteJournal({ synchronous: 'normal' }) (the default) and
 * sqliteJournal({ synchronous: 'full' }), each on a file in the OS temp directory (here a local ext4
 * disk); redisJournal() on the Redis of `REDIS_URL`, else a redis-server of its own on loopback (no
 * persistence: what the tests and CI run); postgresJournal() on the PostgreSQL of
 * `TOOLSTREAM_POSTGRES_URL`, else a cluster of its own on loopback (`test/support/postgres.ts`: default
 * settings, so each commit is flushed to disk). Every journal is counted — appends and entries — to show
 * where the time goes: each append is one SQLite transaction (one commit, and with 'full' one fsync), one
 * Redis script, one PostgreSQL transaction.
 *
 * Method: WARMUP rounds, then ROUNDS measured; in each round every variant runs once, in an order
 * rotated per round; medians reported. Each variant's store is connected (and its schema made) before
 * it is timed. Results are checked (all ok, in order); a failed check exits
 * non-zero. Figures are printed, never asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { z } from 'zod';
import { redisJournal } from '../src/bullmq/index.js';
import { sqliteJournal, type SqliteJournal } from '../src/durable/sqlite/index.js';
import { postgresJournal } from '../src/durable/postgres/index.js';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type JournalEntry, type JournalStore, type Pipeline, type ToolCall, type ToolResult } from '../src/index.js';
import { startPostgres, testSchema } from '../test/support/postgres.js';
import { startRedis } from '../test/support/redis.js';
import { collectGarbage, fmt, median, printHeader } from './common.js';

const WARMUP = 1;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const CONCURRENCY = 10;
const TURNS = 100; // 10-call turns per measured run
const STREAM = 100_000;
/** The stream of the stores that sync or answer over a socket per append. */
const STREAM_SHORT = 10_000;
const RESUMED = 1_000;
const SECRET = 'the journal bench signs approvals with this secret';

const input = z.object({ x: z.number() });
const noop = defineTool({ name: 'noop', description: 'no-op', input, mode: 'parallel', execute: async ({ x }) => x });
const approve = defineTool({ name: 'approve', description: 'asks', input, mode: 'parallel', execute: async ({ x }) => x });
const callsOf = (n: number, name = 'noop'): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: 'c' + i, name, args: { x: i } }));
const turn10 = callsOf(10);
const toResume: ToolCall[] = [...callsOf(RESUMED - 1), { id: 'ask', name: 'approve', args: { x: -1 } }];

/** What the pipeline asked of a store: appends, and the entries they carried. */
interface Counts {
  appends: number;
  entries: number;
}

/** A store that counts what the pipeline asks of it (and passes the rest on as it is). */
function counted(store: JournalStore, counts: Counts): JournalStore {
  return {
    append(key, entries, lease) {
      counts.appends++;
      counts.entries += entries.length;
      return store.append(key, entries, lease);
    },
    read: (key) => store.read(key),
    acquire: (turn, owner, ms) => store.acquire(turn, owner, ms),
    renew: (lease, ms) => store.renew(lease, ms),
    release: (lease) => store.release(lease),
    consume: (turn, nonce) => store.consume(turn, nonce),
    prune: (options) => store.prune(options),
  };
}

/**
 * A variant: a store (or none) and the pipelines on it. `renew()` gives it a new, empty store before a
 * run of the long workloads, so no run pays for the garbage, the file or the tables of the runs before
 * it (a memory journal keeps every turn: after a few 100k-call turns its heap slows every later GC).
 */
interface Store {
  readonly name: string;
  readonly durable: boolean;
  /** Calls in its stream (workload 2). */
  readonly stream: number;
  readonly counts: Counts;
  /** No policies: the journal is the only difference from the baseline. */
  pipeline: Pipeline;
  /** For the resume: `approve` calls ask, and the approver suspends them. */
  asking: Pipeline;
  renew(): Promise<void>;
  close(): Promise<void>;
}

/** How a variant opens its n-th store, and removes what the one before left (a file, keys, a schema). */
interface Opener {
  open(n: number): JournalStore;
  /** Called once the n-th store is closed. */
  remove?(n: number): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), 'toolstream-journal-bench-'));
async function storeOf(name: string, opener: Opener | undefined, stream = STREAM): Promise<Store> {
  let opened = 0;
  let raw: JournalStore | undefined;
  const counts: Counts = { appends: 0, entries: 0 };
  const close = async () => {
    if (raw === undefined) return;
    const closing = raw;
    raw = undefined;
    await closing.close?.();
    await opener?.remove?.(opened - 1);
  };
  const store: Store = {
    name,
    durable: opener !== undefined,
    stream,
    counts,
    pipeline: undefined as never,
    asking: undefined as never,
    async renew() {
      await close();
      raw = opener?.open(opened++);
      await raw?.read('bench: connected'); // connected (the file open, the schema made) before it is timed
      const durable = raw === undefined ? {} : { journal: counted(raw, counts), approvalSecret: SECRET };
      store.pipeline = createPipeline({ tools: [noop, approve], concurrency: CONCURRENCY, ...durable });
      store.asking = createPipeline({ tools: [noop, approve], concurrency: CONCURRENCY, pre: [askTools(['approve'])], approve: suspendApprovals(), ...durable });
    },
    close,
  };
  await store.renew();
  return store;
}
/** A new file each time (the old one removed once closed): every run starts from an empty journal. */
const sqlite = (synchronous: 'normal' | 'full'): Opener => {
  const path = (k: number) => join(dir, `${synchronous}-${k}.db`);
  return {
    open: (n) => sqliteJournal({ path: path(n), synchronous }) as SqliteJournal,
    remove: async (n) => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(path(n) + suffix, { force: true });
    },
  };
};
/** A new prefix each time; every turn the bench wrote has finished, so pruning them all leaves nothing of it on a shared Redis. */
function redis(url: string): Opener {
  const prefix = (n: number) => `bench-journal-${process.pid}-${n}`;
  return {
    open: (n) => redisJournal({ connection: url, prefix: prefix(n) }),
    remove: async (n) => {
      const store = redisJournal({ connection: url, prefix: prefix(n) });
      await store.prune({ finishedBefore: Date.now() + 1 });
      await store.close();
    },
  };
}
/** A new schema each time (made before the store is timed), dropped with its tables once the store is closed. */
function postgres(url: string): Opener {
  const schemaOf = new Map<number, string>();
  return {
    open: (n) => {
      schemaOf.set(n, testSchema('bench'));
      return postgresJournal({ connectionString: url }, { schema: schemaOf.get(n)! });
    },
    remove: async (n) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schemaOf.get(n)!}" CASCADE`).finally(() => client.end());
    },
  };
}

let ok = true;
function check(label: string, results: readonly ToolResult[], n: number, last: ToolResult['status'] = 'ok'): void {
  const bad = results.length !== n ? results.length : results.findIndex((r, i) => r.index !== i || r.status !== (i === n - 1 ? last : 'ok'));
  if (bad >= 0) {
    ok = false;
    console.error(`CHECK FAILED: ${label}: ${results.length} results, first wrong at ${bad}:`, results[bad]?.status, results[bad]?.error);
  }
}

let turnIds = 0;
const fresh = (label: string) => `${label} ${turnIds++}`;

/** Runs `work` for every store, ROUNDS times after WARMUP, rotated; the medians in ms, and the counts per measured run. */
async function measure(label: string, work: (store: Store) => Promise<number>, only: readonly Store[], renew = false) {
  const times = new Map<string, number[]>(only.map((s) => [s.name, []]));
  const counts = new Map<string, Counts>();
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (let k = 0; k < only.length; k++) {
      const store = only[(k + round) % only.length]!;
      if (renew) await store.renew();
      collectGarbage();
      const before = { ...store.counts };
      const elapsed = await work(store);
      if (round < WARMUP) continue;
      times.get(store.name)!.push(elapsed);
      counts.set(store.name, { appends: store.counts.appends - before.appends, entries: store.counts.entries - before.entries });
    }
  }
  return { label, medians: new Map([...times].map(([name, t]) => [name, median(t)])), times, counts };
}

async function main(): Promise<void> {
  printHeader(`journal: durable turns per store, concurrency ${CONCURRENCY}, ${WARMUP} warm-up + ${ROUNDS} measured rounds`);
  const [redisServer, postgresServer] = await Promise.all([startRedis(), startPostgres()]);
  const given = (variable: string) => (process.env[variable] === undefined ? 'a server of its own' : variable);
  console.log(`redis: ${given('REDIS_URL')} (${redisServer.url}); postgres: ${given('TOOLSTREAM_POSTGRES_URL')} (${postgresServer.url})`);
  console.log(`load average (1, 5, 15 min) at start: ${loadavg().map((l) => fmt(l, 2)).join(', ')}`);
  const stores = [
    await storeOf('no journal', undefined),
    await storeOf('memoryJournal', { open: () => memoryJournal() }),
    await storeOf("sqliteJournal 'normal' (default)", sqlite('normal')),
    await storeOf("sqliteJournal 'full'", sqlite('full'), STREAM_SHORT),
    await storeOf('redisJournal', redis(redisServer.url), STREAM_SHORT),
    await storeOf('postgresJournal', postgres(postgresServer.url), STREAM_SHORT),
  ];

  // 1. 10-call turns, one after another.
  const turns = await measure('10-call turns', async (store) => {
    const start = performance.now();
    for (let t = 0; t < TURNS; t++) {
      const results = await store.pipeline.run(turn10, store.durable ? { turn: fresh('ten') } : {});
      if (t === 0) check(`${store.name}, 10-call turn`, results, 10);
    }
    return (performance.now() - start) / TURNS;
  }, stores);
  const base10 = turns.medians.get('no journal')!;
  console.log(`\n## ${TURNS} ten-call turns of no-op calls, one after another (per turn; target: a durable turn adds ≤ 10 ms)`);
  console.table(
    stores.map((s) => {
      const ms = turns.medians.get(s.name)!;
      const counts = turns.counts.get(s.name)!;
      return {
        store: s.name,
        'ms per turn': fmt(ms, 3),
        'min–max': `${fmt(Math.min(...turns.times.get(s.name)!), 3)}–${fmt(Math.max(...turns.times.get(s.name)!), 3)}`,
        'adds ms': !s.durable ? '—' : fmt(ms - base10, 3),
        'ratio': fmt(ms / base10, 2),
        'appends per turn': !s.durable ? '—' : fmt(counts.appends / TURNS, 1),
        'entries per turn': !s.durable ? '—' : fmt(counts.entries / TURNS, 1),
      };
    }),
  );

  // 2. One long turn: a stream of calls.
  const streams = new Map([STREAM, STREAM_SHORT].map((n) => [n, callsOf(n)]));
  const long = await measure(
    'stream',
    async (store) => {
      const calls = streams.get(store.stream)!;
      const start = performance.now();
      const results = await store.pipeline.run(calls, store.durable ? { turn: fresh('stream') } : {});
      const elapsed = performance.now() - start;
      check(`${store.name}, stream`, results, calls.length);
      return elapsed;
    },
    stores,
    true,
  );
  const basePerCall = long.medians.get('no journal')! / STREAM;
  console.log(`\n## One durable turn of ${STREAM / 1000}k no-op calls (sqlite 'full', Redis, PostgreSQL: ${STREAM_SHORT / 1000}k) (target ≥ 20k calls/s)`);
  console.table(
    stores.map((s) => {
      const n = s.stream;
      const ms = long.medians.get(s.name)!;
      const counts = long.counts.get(s.name)!;
      return {
        store: s.name,
        calls: n,
        'median ms': fmt(ms, 0),
        'calls/s': Math.round((n / ms) * 1000).toLocaleString('en-US'),
        'µs per call': fmt((ms * 1000) / n, 1),
        'ratio vs no journal': fmt(ms / n / basePerCall, 2),
        'calls per append': !s.durable ? '—' : fmt(n / counts.appends, 1),
        'entries per append': !s.durable ? '—' : fmt(counts.entries / counts.appends, 1),
      };
    }),
  );

  // 3. Resume a 1,000-call turn: 999 finished, one suspended and answered now.
  const durableStores = stores.slice(1);
  const resumed = await measure(
    'resume',
    async (store) => {
      const turn = fresh('resume');
      const first = await store.asking.run(toResume, { turn });
      check(`${store.name}, before resume`, first, RESUMED, 'suspended');
      const [approval] = await store.asking.pendingApprovals(turn);
      collectGarbage();
      const start = performance.now();
      const results = await store.asking.resume(turn, { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
      const elapsed = performance.now() - start;
      check(`${store.name}, resumed`, results, RESUMED);
      return elapsed;
    },
    durableStores,
    true,
  );
  console.log(`\n## Resuming a ${RESUMED}-call turn (${RESUMED - 1} replayed from the journal, one approved and run)`);
  console.table(
    durableStores.map((s) => ({
      store: s.name,
      'median ms': fmt(resumed.medians.get(s.name)!, 1),
      'min–max ms': `${fmt(Math.min(...resumed.times.get(s.name)!), 1)}–${fmt(Math.max(...resumed.times.get(s.name)!), 1)}`,
    })),
  );

  console.log(`\nload average (1, 5, 15 min) at end: ${loadavg().map((l) => fmt(l, 2)).join(', ')}`);
  console.log(`sanity: every run returned its results in order with the statuses expected: ${ok ? 'yes' : 'NO'}`);
  for (const store of stores) await store.close();
  await Promise.all([redisServer.stop(), postgresServer.stop()]);
  rmSync(dir, { recursive: true, force: true });
  if (!ok) process.exitCode = 1;
}

await main();
