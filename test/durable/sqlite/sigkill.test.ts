/**
 * A process driving a durable turn on a SQLite journal is killed with SIGKILL at random moments —
 * during bodies, between journal writes, inside a commit — and the test (another process) resumes the
 * turn on the same file. The bodies mark each run in a file of their own (`crashTools.ts`), so the
 * test can tell what ran, and how often, whatever the journal says.
 *
 * Checked after every kill:
 * - write-ahead: a body that left its mark has its `started` record in the file (the record was
 *   reported written before the body was invoked, and SIGKILL cannot take it back);
 * - resume answers every call once, in order, and nothing stays suspended;
 * - a call that finished is replayed as it was; one that started and never finished is
 *   `outcome_unknown` and does not run again — unless its tool is idempotent (`fetch`), then it re-runs;
 *   one that never started runs now;
 * - no non-idempotent body ran twice, and a second resume runs nothing and answers the same;
 * - while the killed driver's lease is live, a resume is refused (`turn_leased`), and once it has
 *   expired (the test's clock moved past it) a resume takes it over;
 * - `PRAGMA integrity_check` says `ok`.
 */
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sqliteJournal, type SqliteJournal } from '../../../src/durable/sqlite/index.js';
import { foldTurn } from '../../../src/durable/turnState.js';
import { checkResumed, checkWriteAhead, goThenKill } from './crashChecks.js';
import { crashPipeline, LEASE_MS } from './crashTools.js';
import { buildChild, startChild } from './processes.js';

/** Kills that landed before the turn was done (a child that finished first is not counted). */
const KILLS = Number(process.env.SIGKILL_RUNS ?? 50);
/** Trials at once, each with a child driving its own turn on the one file (and a spare starting). */
const AT_ONCE = 2;
/**
 * Kills land 0–60 ms after the child (warmed up) is told to go: its turn takes ~20–60 ms, slower while
 * other children start — so a few kills come before anything was written, most during the turn, some
 * after it finished (those are not counted).
 */
const MAX_DELAY_MS = 60;

describe('SIGKILL at random moments (real processes, one SQLite file)', () => {
  let child: Awaited<ReturnType<typeof buildChild>>;
  let dir: string;
  let path: string;
  let store: SqliteJournal;
  let raw: Database.Database;

  beforeAll(async () => {
    child = await buildChild();
    dir = mkdtempSync(join(tmpdir(), 'toolstream-sigkill-'));
    path = join(dir, 'journal.db');
    store = sqliteJournal({ path });
    raw = new Database(path, { readonly: true });
  });
  afterAll(() => {
    raw?.close();
    store?.close();
    child?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the resumes of one trial at a time: they move this process's clock, which the other trial reads. */
  let turnstile: Promise<unknown> = Promise.resolve();
  const exclusively = <T>(work: () => Promise<T>): Promise<T> => {
    const run = turnstile.then(work);
    turnstile = run.catch(() => undefined);
    return run;
  };

  /** A child that will drive turn `n`, started ahead of its trial (starting node is most of a trial's time). */
  function spawnDriver(n: number) {
    const turn = `kill ${n}`;
    const marks = join(dir, `marks-${n}`);
    mkdirSync(marks);
    const driver = startChild(child.script, ['drive', path, marks, turn]);
    const ready = driver.nextLine();
    ready.catch(() => undefined); // a spare killed before it was ready: nobody waits for it
    return { n, turn, marks, driver, ready };
  }

  /** Lets the child run, kills it after `delay` ms (unless it finished first), then checks. Resolves to what happened. */
  async function trial(spawned: ReturnType<typeof spawnDriver>, delay: number): Promise<{ killed: boolean; written: boolean; unfinished: number; refused: boolean; cancelled: number }> {
    const { n, turn, marks, driver } = spawned;
    const killed = await goThenKill(driver, spawned.ready, delay);

    const journaled = foldTurn(store.read(turn));
    const { before, context } = checkWriteAhead(journaled, marks, { n, delay });

    const pipeline = crashPipeline(store, marks);
    if (journaled.size === 0) {
      // Killed before its first append: nothing ran, and there is no turn to resume.
      expect(before.size, context).toBe(0);
      await expect(pipeline.resume(turn)).rejects.toMatchObject({ code: 'turn_unknown' });
      return { killed, written: false, unfinished: 0, refused: false, cancelled: 0 };
    }

    // The dead driver's lease (10 s): while it lives a resume is refused; then this process's clock is
    // moved past it, rather than waiting, and the resume takes the lease over. One trial at a time
    // from here: the other trial reads the same clock.
    return exclusively(async () => {
      const until = raw.prepare("SELECT until FROM leases WHERE turn = ? AND owner != ''").pluck().get(turn) as number | undefined; // a released lease keeps its row (and epoch)
      if (until !== undefined) await expect(pipeline.resume(turn)).rejects.toMatchObject({ code: 'turn_leased' });
      const realNow = Date.now.bind(Date);
      const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + (until === undefined ? 0 : LEASE_MS));
      try {
        const checked = await checkResumed(pipeline, turn, journaled, before, marks, context);
        expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
        return { killed, written: true, refused: until !== undefined, ...checked };
      } finally {
        clock.mockRestore();
      }
    });
  }

  // About 11 s on an idle machine; each trial starts a node process, so on a busy one (load 25 on two
  // cores) it took over the suite's 120 s: a ceiling only a hang reaches.
  it(`no non-idempotent body runs twice, every call gets one result, the file stays intact — over ${KILLS} kills`, { timeout: 300_000 }, async () => {
    let kills = 0;
    let trials = 0;
    let beforeWrites = 0;
    let withUnfinished = 0;
    let refusals = 0;
    let cancelledCalls = 0;
    // Until the kills have landed where it matters — enough of them, enough with bodies started and not
    // finished, enough while the lease was live — however this machine's timing spreads them (a slow
    // start puts more kills before the first write): more trials, never a weaker check. Bounded.
    const covered = () => kills >= KILLS && withUnfinished >= KILLS / 5 && refusals >= KILLS / 2;
    const worker = async () => {
      let next = spawnDriver(trials++);
      while (!covered() && trials < KILLS * 6) {
        const current = next;
        next = spawnDriver(trials++); // starts while this trial runs
        const outcome = await trial(current, Math.random() * MAX_DELAY_MS);
        if (outcome.killed) kills++;
        if (!outcome.written) beforeWrites++;
        if (outcome.unfinished > 0) withUnfinished++;
        if (outcome.refused) refusals++;
        cancelledCalls += outcome.cancelled;
      }
      next.driver.process.kill('SIGKILL'); // the spare, never told to go
      await next.driver.exited;
    };
    await Promise.all(Array.from({ length: AT_ONCE }, worker));
    console.log(`SIGKILL: ${trials} children, ${kills} killed before their turn was done: ${beforeWrites} before its first journal write, ${withUnfinished} with calls started and unfinished; ${refusals} resumes refused while the lease was live; ${cancelledCalls} calls cancelled behind an outcome_unknown exclusive call`);
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    // The kills landed where it matters: with bodies started and not finished, and with a live lease.
    expect(withUnfinished).toBeGreaterThanOrEqual(KILLS / 5);
    expect(refusals).toBeGreaterThanOrEqual(KILLS / 2);
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});
