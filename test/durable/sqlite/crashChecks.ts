/**
 * The checks of the SIGKILL tests (SQLite and Redis) once a killed turn is resumed: what each call's
 * result and its body's runs must be, given what the journal and the marks said before the resume.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { foldTurn } from '../../../src/durable/turnState.js';
import type { ToolResult } from '../../../src/index.js';
import { crashTurn, type crashPipeline } from './crashTools.js';
import type { Child } from './processes.js';

export const outline = (results: readonly ToolResult[]) => results.map((r) => ({ id: r.id, status: r.status, code: r.error?.code, content: r.content }));

/** How often each call's body ran, from the marks its runs left. */
export const runsIn = (marks: string) => new Map(readdirSync(marks).map((id) => [id, readFileSync(join(marks, id), 'utf8').split('\n').length - 1]));

/** Tells a ready driver to go, SIGKILLs it `delay` ms later; true if the kill landed (false: it had finished). */
export async function goThenKill(driver: Child, ready: Promise<string>, delay: number): Promise<boolean> {
  expect(await ready).toBe('ready');
  driver.process.stdin.write('go\n');
  await sleep(delay);
  driver.process.kill('SIGKILL');
  const { signal, code, stderr } = await driver.exited;
  expect(signal === 'SIGKILL' || code === 0, stderr).toBe(true);
  return signal === 'SIGKILL';
}

/**
 * {@link goThenKill} for a driver whose store is a server: first checks that the ready driver shows up
 * under its own name (`connections` counts the server's connections of it, so the wait below cannot pass
 * without waiting), then, after the kill, waits until the server has dropped them all. A server finishes
 * what a dead client had sent before it notices the closed socket (PostgreSQL commits an append it
 * received; Redis runs a command), so a journal read sooner could see a call unfinished that the dead
 * driver's last append then finishes.
 */
export async function killConnected(spawned: { readonly driver: Child; readonly ready: Promise<string>; readonly name: string }, delay: number, connections: (name: string) => Promise<number>): Promise<boolean> {
  const { driver, ready, name } = spawned;
  await ready;
  expect(await connections(name), 'a ready driver is connected under its name').toBeGreaterThan(0);
  const killed = await goThenKill(driver, ready, delay);
  for (let polls = 0; (await connections(name)) > 0; polls++) {
    expect(polls, `the connections of ${name} outlived it`).toBeLessThan(1000);
    await sleep(10);
  }
  return killed;
}

/** What {@link killTrials} counted. */
export interface KillCounts {
  readonly trials: number;
  /** Kills that landed before the turn was done (a driver that finished first is not counted). */
  readonly kills: number;
  readonly withUnfinished: number;
  readonly refusals: number;
}

/**
 * Runs kill trials one after another, each next driver spawned while the trial before runs, until the
 * kills have landed where it matters — `kills` of them, a fifth of those with bodies started and not
 * finished, half while the lease was live — however the machine's timing spreads them (more trials,
 * never a weaker check; at most `kills × 6`). The spare left at the end is killed.
 */
export async function killTrials<S extends { readonly driver: Child }>(
  kills: number,
  spawn: (n: number) => S,
  trial: (spawned: S, delay: number) => Promise<{ readonly killed: boolean; readonly unfinished: number; readonly refused: boolean }>,
  maxDelayMs: number,
): Promise<KillCounts> {
  const counts = { trials: 0, kills: 0, withUnfinished: 0, refusals: 0 };
  const covered = () => counts.kills >= kills && counts.withUnfinished >= kills / 5 && counts.refusals >= kills / 2;
  let next = spawn(counts.trials++);
  try {
    while (!covered() && counts.trials < kills * 6) {
      const current = next;
      next = spawn(counts.trials++); // starts while this trial runs
      const outcome = await trial(current, Math.random() * maxDelayMs);
      if (outcome.killed) counts.kills++;
      if (outcome.unfinished > 0) counts.withUnfinished++;
      if (outcome.refused) counts.refusals++;
    }
  } finally {
    next.driver.process.kill('SIGKILL'); // the spare, never told to go
    await next.driver.exited;
  }
  return counts;
}

/**
 * Right after a kill: every body that left its mark has its `started` record (written ahead of the
 * body), and none ran twice. Returns the marks, and a description of the trial for failure messages.
 */
export function checkWriteAhead(journaled: ReturnType<typeof foldTurn>, marks: string, trial: Readonly<Record<string, unknown>>): { before: Map<string, number>; context: string } {
  const before = runsIn(marks);
  const context = JSON.stringify({ ...trial, journaled: [...journaled.values()].map((c) => [c.id, c.started, c.finished?.status]), before: [...before] });
  for (const [id, count] of before) {
    // A kill between the body's open and write leaves its file empty: it started all the same.
    expect(count, context).toBeLessThanOrEqual(1);
    expect(journaled.get(Number(id.slice(1)))?.started, `${id} ran without its started record: ${context}`).toBe(true);
  }
  return { before, context };
}

/** Resumes the killed turn, and checks each call against what the journal and the marks said before. */
export async function checkResumed(
  pipeline: ReturnType<typeof crashPipeline>,
  turn: string,
  journaled: ReturnType<typeof foldTurn>,
  before: ReadonlyMap<string, number>,
  marks: string,
  context: string,
): Promise<{ unfinished: number; cancelled: number }> {
  const results = await pipeline.resume(turn);
  const after = runsIn(marks);
  expect(results.map((r) => r.id), context).toEqual(crashTurn.map((c) => c.id));
  let unfinished = 0;
  let cancelled = 0;
  for (const [index, call] of crashTurn.entries()) {
    const result = results[index]!;
    const was = journaled.get(index);
    const ranBefore = before.get(call.id) ?? 0;
    const ranAfter = after.get(call.id) ?? 0;
    const idempotent = call.name === 'fetch';
    const where = `${call.id} (${call.name}): ${context} → ${JSON.stringify(outline([result]))}`;
    if (was?.finished !== undefined) {
      expect({ status: result.status, content: result.content }, where).toEqual({ status: was.finished.status, content: was.finished.content });
      expect(ranAfter, where).toBe(ranBefore);
    } else if (was?.started === true) {
      unfinished++;
      if (idempotent) {
        expect(result.status, where).toBe('ok');
        expect(ranAfter, where).toBe(ranBefore + 1);
      } else {
        expect(result.error?.code, where).toBe('outcome_unknown');
        expect(ranAfter, where).toBe(ranBefore);
      }
    } else {
      // Never started: it runs now, once — unless an exclusive call before it is `outcome_unknown`,
      // which fails where it would have run and, as a live exclusive failure does, cancels the rest
      // of its turn: then it is `cancelled` and does not run (counted).
      expect(before.has(call.id), where).toBe(false);
      if (result.status === 'ok') expect(ranAfter, where).toBe(1);
      else {
        const unknownExclusive = results.slice(0, index).some((r) => r.name === 'email' && r.error?.code === 'outcome_unknown');
        expect({ status: result.status, unknownExclusive }, where).toEqual({ status: 'cancelled', unknownExclusive: true });
        expect(ranAfter, where).toBe(0);
        cancelled++;
      }
    }
    if (!idempotent) expect(ranAfter, where).toBeLessThanOrEqual(1);
  }

  // Done: a second resume replays the same results and runs nothing.
  expect(outline(await pipeline.resume(turn))).toEqual(outline(results));
  expect(runsIn(marks)).toEqual(after);
  return { unfinished, cancelled };
}
