/**
 * The faults of the chaos suite: SIGKILL and SIGSTOP (then SIGCONT) of agents and workers at seeded
 * random points, while the fault window is open. A kill prefers a process that is busy (an agent with a
 * command in flight); a stall mostly outlives the lease or the job lock (so another process takes the
 * work over and the stalled one wakes to find it gone), sometimes not (it just carries on).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProcessPool } from './chaosProcesses.js';
import type { Random } from './chaosRandom.js';

/** What has landed so far, over all phases. */
export interface FaultCounts {
  agentKills: number;
  workerKills: number;
  agentStalls: number;
  workerStalls: number;
}

/**
 * While faults are injected and new turns start: until `ms` has passed and at least `minKills` kills
 * and `minStalls` stalls landed over all phases — but never past `maxMs`. Once closed it stays closed.
 */
export class FaultWindow {
  readonly counts: FaultCounts = { agentKills: 0, workerKills: 0, agentStalls: 0, workerStalls: 0 };
  readonly #start = Date.now();
  #closed = false;

  constructor(
    private readonly ms: number,
    private readonly maxMs: number,
    private readonly minKills: number,
    private readonly minStalls: number,
  ) {}

  get kills(): number {
    return this.counts.agentKills + this.counts.workerKills;
  }

  get stalls(): number {
    return this.counts.agentStalls + this.counts.workerStalls;
  }

  open(): boolean {
    const elapsed = Date.now() - this.#start;
    if (elapsed >= this.maxMs || (elapsed >= this.ms && this.kills >= this.minKills && this.stalls >= this.minStalls)) this.#closed = true;
    return !this.#closed;
  }
}

/** A pool faults land on, and how often each kind lands there relative to the other targets. */
export interface FaultTarget {
  readonly pool: ProcessPool;
  readonly role: 'agent' | 'worker';
  readonly kill: number;
  readonly stall: number;
}

/** The rhythm of one phase's faults (ms ranges, drawn uniformly). */
export interface FaultTiming {
  /** Between two faults. */
  readonly gapMs: readonly [number, number];
  /** A stall that outlives the lease (or the lock): most of them. */
  readonly longStallMs: readonly [number, number];
  /** From a kill to its replacement's start. */
  readonly respawnMs: readonly [number, number];
}

/** What landed in one phase: so each phase can be shown to have had its share (not only the sum). */
export interface PhaseFaults {
  kills: number;
  stalls: number;
}

/** Injects faults on `targets` while `window` is open; resolves with what landed. */
export async function injectFaults(random: Random, window: FaultWindow, targets: readonly FaultTarget[], timing: FaultTiming): Promise<PhaseFaults> {
  const landed: PhaseFaults = { kills: 0, stalls: 0 };
  const kinds = targets.flatMap((target) => [
    { target, kind: 'kill' as const, weight: target.kill },
    { target, kind: 'stall' as const, weight: target.stall },
  ]);
  const total = kinds.reduce((sum, kind) => sum + kind.weight, 0);
  while (window.open()) {
    await sleep(random.int(...timing.gapMs));
    let at = random.float() * total;
    const { target, kind } = kinds.find((candidate) => (at -= candidate.weight) < 0) ?? kinds[0]!;
    const preferBusy = random.chance(0.85);
    const stallMs = random.chance(0.15) ? random.int(80, 250) : random.int(...timing.longStallMs);
    const respawnMs = random.int(...timing.respawnMs);
    if (!window.open()) break;
    const ready = target.pool.ready();
    const busy = ready.filter((member) => member.busy);
    const candidates = preferBusy && busy.length > 0 ? busy : ready;
    if (candidates.length === 0) continue;
    const member = random.pick(candidates);
    if (kind === 'kill') {
      target.pool.kill(member, respawnMs);
      window.counts[target.role === 'agent' ? 'agentKills' : 'workerKills']++;
      landed.kills++;
    } else {
      target.pool.stall(member, stallMs);
      window.counts[target.role === 'agent' ? 'agentStalls' : 'workerStalls']++;
      landed.stalls++;
    }
  }
  return landed;
}
