/**
 * A process that stalls past its lease (SIGSTOP: what a long GC pause, a slow disk or a suspended VM
 * does) while another process takes its turn over, then wakes up (SIGCONT) — before the new owner
 * finished, or after. Fencing must hold on every store: the stale process starts no body and changes
 * nothing of the turn once it was taken; its run fails with `lease_lost`. Checked from the bodies' own
 * marks (one file per call, a line per start, with the pid) and from the journal itself.
 *
 * Real processes on a real SQLite file and a real Redis; the memory store, which lives in one process,
 * stalls its "process" by holding every store call it makes.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisJournal } from '../../../src/bullmq/index.js';
import { endOf } from '../../../src/durable/pruning.js';
import { sqliteJournal } from '../../../src/durable/sqlite/index.js';
import { memoryJournal, type JournalEntry, type JournalStore, type ToolResult } from '../../../src/index.js';
import { deferred, type Deferred } from '../../support/deferred.js';
import { redisAvailable, redisMissing, requireRedis, startRedis, type TestRedis } from '../../support/redis.js';
import { skippedBecause } from '../../support/skip.js';
import { buildChild, startChild } from '../sqlite/processes.js';
import { STALL_LEASE_MS, stallPipeline, stallTurn } from './stallTools.js';

requireRedis();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const IDS = stallTurn.map((call) => call.id);

/** Every body start, per call, from the marks: the pids that started it. */
function startsOf(dir: string): Record<string, string[]> {
  const starts: Record<string, string[]> = {};
  for (const id of IDS) {
    let text = '';
    try {
      text = readFileSync(join(dir, id), 'utf8');
    } catch {
      // never started
    }
    starts[id] = text.split('\n').filter((line) => line.endsWith(' start')).map((line) => line.split(' ')[0]!);
  }
  return starts;
}

/** What the journal says, and what the bodies say: one result each, no body twice, nothing after the new owner's end. */
function checkTurn(entries: readonly JournalEntry[], resumed: readonly ToolResult[], dir: string): void {
  const starts = startsOf(dir);
  for (const id of IDS) expect(starts[id]!.length, `starts of ${id}: ${JSON.stringify(starts)}`).toBeLessThanOrEqual(1);
  const finished = new Map<number, number>();
  for (const entry of entries) if (entry.kind === 'finished') finished.set(entry.index, (finished.get(entry.index) ?? 0) + 1);
  expect([...finished.values()], 'one finished entry per call').toEqual(IDS.map(() => 1));
  expect(resumed.map((result) => result.id)).toEqual(IDS);
  for (const [i, result] of resumed.entries()) {
    // A call the stale owner had started and not journaled finished is outcome_unknown; every other ran once.
    if (result.status === 'error') expect(result.error.code).toBe('outcome_unknown');
    else expect(result.status).toBe('ok');
    if (result.status === 'ok') expect(starts[IDS[i]!], IDS[i]).toHaveLength(1);
  }
  expect(endOf(entries), 'the new owner\'s `ended` stays the last entry').toBeDefined();
}

type When = 'after the new owner finished' | 'while the new owner runs';
const WHENS: readonly When[] = ['after the new owner finished', 'while the new owner runs'];

describe('a stalled owner (SIGSTOP past its lease, then SIGCONT) cannot start a body or change a turn another process took over', () => {
  let child: Awaited<ReturnType<typeof buildChild>>;
  let redis: TestRedis | undefined;
  const dirs: string[] = [];
  const prefix = `test:${randomUUID()}`;

  beforeAll(async () => {
    child = await buildChild('test/durable/stall/stallChild.ts');
  });
  afterAll(async () => {
    child?.remove();
    if (redis !== undefined) {
      const raw = new Redis(redis.url);
      const keys = await raw.keys(`${prefix}*`);
      if (keys.length > 0) await raw.del(...keys);
      await raw.quit();
      await redis.stop();
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolstream-stall-'));
    dirs.push(dir);
    return dir;
  };

  /** The stale owner runs in a child; this process takes the turn over while it is stopped. */
  async function stall(kind: 'sqlite' | 'redis', when: When): Promise<void> {
    const dir = fresh();
    const turn = `stall ${kind} ${when}`;
    let location: string;
    let store: JournalStore;
    if (kind === 'sqlite') {
      location = join(dir, 'turns.db');
      store = sqliteJournal({ path: location });
    } else {
      location = (redis ??= await startRedis()).url;
      store = redisJournal({ connection: location, prefix });
    }
    const marks = join(dir, 'marks');
    mkdirSync(marks);
    const stale = startChild(child.script, ['drive', kind, location, prefix, marks, turn]);
    try {
      expect(await stale.nextLine()).toBe('ready');
      stale.process.stdin.write('go\n');
      expect(await stale.nextLine()).toBe('start c0');
      expect(await stale.nextLine()).toBe('start c1');
      stale.process.kill('SIGSTOP'); // mid-body of c1
      await sleep(STALL_LEASE_MS + 250); // its lease lapses

      const wake = () => stale.process.kill('SIGCONT');
      let resumed: ToolResult[];
      if (when === 'after the new owner finished') {
        resumed = await stallPipeline(store, marks).resume(turn);
        wake();
      } else {
        const started = deferred<void>();
        const running = stallPipeline(store, marks, () => started.resolve()).resume(turn);
        await started.promise;
        wake();
        resumed = await running;
      }
      const outcome = JSON.parse(await stale.nextLine()) as { error?: string; results?: readonly string[] };
      expect(outcome.error, JSON.stringify(outcome)).toBe('lease_lost');
      await stale.exited;
      await sleep(50);
      checkTurn(await store.read(turn), resumed, marks);
      // The turn is the new owner's: resumed again, it replays the same results and runs nothing.
      expect((await stallPipeline(store, marks).resume(turn)).map((r) => r.status)).toEqual(resumed.map((r) => r.status));
      expect(Object.values(startsOf(marks)).flat().length).toBeLessThanOrEqual(IDS.length);
    } finally {
      stale.process.kill('SIGKILL');
      await store.close?.();
    }
  }

  for (const when of WHENS) {
    it(`on SQLite, waking ${when}`, () => stall('sqlite', when));
    it.skipIf(!redisAvailable())(skippedBecause(`on Redis, waking ${when}`, redisMissing()), () => stall('redis', when));
    it(`on the memory journal (one process: its store calls held), waking ${when}`, () => memoryStall(when, fresh()));
  }
});

/** A process's view of a shared memory journal that can stall: while stalled, every call it makes waits. */
class StallingView implements JournalStore {
  #stalled: Deferred<void> | undefined;
  constructor(private readonly shared: JournalStore) {}
  stall(): void {
    this.#stalled ??= deferred<void>();
  }
  wake(): void {
    this.#stalled?.resolve();
    this.#stalled = undefined;
  }
  async #ready(): Promise<void> {
    while (this.#stalled !== undefined) await this.#stalled.promise;
  }
  append: JournalStore['append'] = async (...args) => (await this.#ready(), this.shared.append(...args));
  read: JournalStore['read'] = async (...args) => (await this.#ready(), this.shared.read(...args));
  acquire: JournalStore['acquire'] = async (...args) => (await this.#ready(), this.shared.acquire(...args));
  renew: JournalStore['renew'] = async (...args) => (await this.#ready(), this.shared.renew(...args));
  release: JournalStore['release'] = async (...args) => (await this.#ready(), this.shared.release(...args));
  consume: JournalStore['consume'] = async (...args) => (await this.#ready(), this.shared.consume(...args));
  prune: JournalStore['prune'] = async (...args) => (await this.#ready(), this.shared.prune(...args));
}

async function memoryStall(when: When, dir: string): Promise<void> {
  const shared = memoryJournal();
  const view = new StallingView(shared);
  const turn = 'stall memory';
  const second = deferred<void>();
  const stale = stallPipeline(view, dir, (callId) => callId === 'c1' && (view.stall(), second.resolve()))
    .run(stallTurn, { turn })
    .then(
      () => 'completed',
      (error: { code?: string }) => error.code,
    );
  await second.promise;
  await sleep(STALL_LEASE_MS + 150);
  let resumed: ToolResult[];
  if (when === 'after the new owner finished') {
    resumed = await stallPipeline(shared, dir).resume(turn);
    view.wake();
  } else {
    const started = deferred<void>();
    const running = stallPipeline(shared, dir, () => started.resolve()).resume(turn);
    await started.promise;
    view.wake();
    resumed = await running;
  }
  expect(await stale).toBe('lease_lost');
  checkTurn(await shared.read(turn), resumed, dir);
}
