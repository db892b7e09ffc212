/**
 * The chaos suite's checks, from the bodies' own side-effect logs, the controller's records of every
 * result the agents gave out, and each turn's journal:
 * - every turn ended with no call suspended, with exactly one final result per call, in model order,
 *   and exactly one `finished` entry per call in its journal; nothing a command gave out before (a
 *   suspended round, a run that lost its lease) differs from the final result of its call;
 * - no non-idempotent body started twice for one call (a double run), none whose approval was rejected started;
 * - every `ok` result carries the value a body of its call ended with (so nothing a body did not
 *   return — a forged value, another call's — reached the model);
 * - nothing the adversary planted reached a result, and no job it replayed ran its body again.
 * Failures are collected, not thrown, so one run reports all it found.
 */
import type { JournalEntry } from '../../src/index.js';
import type { Planted, Replayed } from './chaosAdversary.js';
import type { FaultWindow, PhaseFaults } from './chaosFaults.js';
import { callKey, specOf, type BodyLine, type ResultOutline } from './chaosTools.js';
import type { TurnRecord } from './turnDriver.js';

/** What one phase counted. */
export interface PhaseCounts {
  turns: number;
  calls: number;
  idempotentReruns: number;
  outcomeUnknown: number;
  leaseLost: number;
  resultUnverified: number;
  doubleRuns: number;
  lost: number;
}

/** What the adversary did, and how much of it was refused. */
export interface Refusals {
  readonly forged: { readonly made: number; readonly refused: number };
  readonly copied: { readonly made: number; readonly refused: number };
  readonly replayed: { readonly made: number; readonly refused: number };
}

/** The error codes a command may end with under these faults; any other is a finding. */
const EXPECTED_ERRORS = new Set(['killed', 'turn_leased', 'lease_lost', 'turn_unknown', 'turn_exists', 'token_used']);

/** The same result, as far as a replay from the journal keeps it (an error's `cause` is not journaled). */
const same = (a: ResultOutline, b: ResultOutline) => a.status === b.status && a.code === b.code && JSON.stringify(a.value) === JSON.stringify(b.value);
const show = (result: ResultOutline | undefined) => JSON.stringify(result);

/** The body lines of each call, by call key. */
function byCall(lines: readonly BodyLine[]): Map<string, BodyLine[]> {
  const calls = new Map<string, BodyLine[]>();
  for (const line of lines) calls.set(line.call, [...(calls.get(line.call) ?? []), line]);
  return calls;
}

const startsOf = (lines: BodyLine[] | undefined) => (lines ?? []).filter((line) => line.e === 'start');

/** Checks one phase's turns; pushes what broke onto `failures` and returns the counts. */
export function checkTurns(phase: string, turns: readonly TurnRecord[], lines: readonly BodyLine[], journals: ReadonlyMap<string, readonly JournalEntry[]>, failures: string[]): PhaseCounts {
  const counts: PhaseCounts = { turns: turns.length, calls: 0, idempotentReruns: 0, outcomeUnknown: 0, leaseLost: 0, resultUnverified: 0, doubleRuns: 0, lost: 0 };
  const bodies = byCall(lines);
  const fail = (turn: string, what: string) => failures.push(`${phase} ${turn}: ${what}`);
  for (const record of turns) {
    const { turn, calls, final } = record;
    counts.calls += calls.length;
    counts.leaseLost += record.errors.get('lease_lost') ?? 0;
    for (const [code, n] of record.errors) if (!EXPECTED_ERRORS.has(code)) fail(turn, `a command ended with ${code} (${n}×)`);
    if (final === undefined) {
      counts.lost += calls.length;
      fail(turn, `never ended with no call suspended (${record.commands} commands; errors ${JSON.stringify([...record.errors])})`);
      continue;
    }
    if (JSON.stringify(final.map((result) => result.id)) !== JSON.stringify(calls.map((call) => call.id))) {
      counts.lost += calls.filter((call) => !final.some((result) => result.id === call.id)).length;
      fail(turn, `final results ${JSON.stringify(final.map((r) => r.id))} are not one per call in model order`);
      continue;
    }
    const finished = new Map<number, number>();
    for (const entry of journals.get(turn) ?? []) if (entry.kind === 'finished') finished.set(entry.index, (finished.get(entry.index) ?? 0) + 1);
    const perCall = calls.map((_, index) => finished.get(index) ?? 0);
    if (perCall.some((n) => n !== 1)) fail(turn, `finished entries per call in the journal: ${JSON.stringify(perCall)}`);

    for (const [index, call] of calls.entries()) {
      const result = final[index]!;
      const key = callKey(turn, call.id);
      const spec = specOf(call.name);
      const mine = bodies.get(key);
      const starts = startsOf(mine).length;
      const where = `${call.id} (${call.name}): ${show(result)}, bodies ${JSON.stringify(mine ?? [])}`;
      if (result.status === 'suspended') fail(turn, `${where} is still suspended`);
      if (spec.idempotent) counts.idempotentReruns += Math.max(0, starts - 1);
      else if (starts > 1) {
        counts.doubleRuns++;
        fail(turn, `double run: ${where}`);
      }
      if (record.answers.get(call.id) === 'rejected' && (starts > 0 || result.status === 'ok')) fail(turn, `rejected, yet ran: ${where}`);
      if (result.status === 'ok') {
        const ended = (mine ?? []).some((line) => line.e === 'end' && JSON.stringify(line.value) === JSON.stringify(result.value));
        if (!ended) fail(turn, `an ok result no body of the call ended with: ${where}`);
      }
      if (result.code === 'outcome_unknown') counts.outcomeUnknown++;
      // The live result says why (a replayed one has no cause): any result given out for the call.
      if ([result, ...record.outputs.flat().filter((given) => given.id === call.id)].some((given) => given.cause === 'result_unverified')) counts.resultUnverified++;
    }
    for (const output of record.outputs) {
      for (const given of output) {
        const settled = final.find((result) => result.id === given.id);
        if (given.status !== 'suspended' && (settled === undefined || !same(given, settled))) fail(turn, `gave out ${show(given)}, but its final result is ${show(settled)}`);
      }
    }
  }
  return counts;
}

/**
 * Whether the adversary's moves were refused: no planted value in any result given out, and no
 * replayed job that ran its body again (each must have been taken by a worker and refused: `failed`).
 */
export function checkAdversary(planted: readonly Planted[], replayed: readonly Replayed[], replayOutcomes: ReadonlyMap<string, string>, turns: readonly TurnRecord[], lines: readonly BodyLine[], failures: string[]): Refusals {
  const given = turns.flatMap((record) => record.outputs.flat().map((result) => ({ turn: record.turn, result })));
  const reached = (plant: Planted) =>
    given.filter(({ turn, result }) => callKey(turn, result.id) === plant.call && result.status === 'ok' && JSON.stringify(result.value) === JSON.stringify(plant.value));
  const plantedRefused = (how: Planted['how']) => {
    const made = planted.filter((plant) => plant.how === how);
    let refused = 0;
    for (const plant of made) {
      const through = reached(plant);
      if (through.length === 0) refused++;
      else failures.push(`a ${how} result reached the model: job ${plant.jobId} of ${plant.call}, value ${JSON.stringify(plant.value)}`);
    }
    return { made: made.length, refused };
  };
  const bodies = byCall(lines);
  let replayRefused = 0;
  for (const replay of replayed) {
    const starts = startsOf(bodies.get(replay.call)).length;
    const outcome = replayOutcomes.get(replay.jobId) ?? 'unknown';
    if (starts <= 1 && outcome.startsWith('failed')) replayRefused++;
    else failures.push(`a ${replay.how} job was not refused: job ${replay.jobId} of ${replay.call}, its body started ${starts}×, the job is ${outcome}`);
  }
  return { forged: plantedRefused('forged'), copied: plantedRefused('copied'), replayed: { made: replayed.length, refused: replayRefused } };
}

/** The one line the suite prints: its seed, how long it took, and what it counted (faults also per phase). */
export function countsLine(seed: number, ms: number, window: FaultWindow, faults: ReadonlyMap<string, PhaseFaults>, phases: readonly PhaseCounts[], refusals: Refusals): string {
  const sum = (key: keyof PhaseCounts) => phases.reduce((total, counts) => total + counts[key], 0);
  const perPhase = [...faults].map(([name, landed]) => `${name} ${landed.kills}/${landed.stalls}`).join(', ');
  const { counts } = window;
  const { forged, copied, replayed } = refusals;
  return (
    `chaos: seed ${seed}, ${Math.round(ms / 1000)} s, kills ${window.kills} (agents ${counts.agentKills}, workers ${counts.workerKills}), ` +
    `stalls ${window.stalls} (agents ${counts.agentStalls}, workers ${counts.workerStalls}), kills/stalls per phase: ${perPhase}, turns ${sum('turns')}, calls ${sum('calls')}, ` +
    `idempotent re-runs ${sum('idempotentReruns')}, outcome_unknown ${sum('outcomeUnknown')}, lease_lost ${sum('leaseLost')}, ` +
    `double runs ${sum('doubleRuns')}, lost ${sum('lost')}, refused ${forged.refused + copied.refused + replayed.refused} of ${forged.made + copied.made + replayed.made} ` +
    `(forged ${forged.refused}/${forged.made}, copied ${copied.refused}/${copied.made}, replayed ${replayed.refused}/${replayed.made}; result_unverified ${sum('resultUnverified')})`
  );
}
