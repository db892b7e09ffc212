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
