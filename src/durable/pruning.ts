import { ConfigError } from '../util/errors.js';
import { isRecord } from '../util/validate.js';
import type { JournalEntry, PruneOptions, TurnEnded } from '../types/journal.js';

/**
 * What every store shares about its keys and about pruning — so memory, SQLite and Redis (whose Lua
 * mirrors `mayPrune`) decide alike.
 */

/** The turn a journal key belongs to: a program's sub-calls are kept under `turn NUL callId`. */
export function turnOfKey(key: string): string {
  const nul = key.indexOf('\u0000');
  return nul === -1 ? key : key.slice(0, nul);
}

/** Throws unless `key` is `turn`'s journal or a program's journal in it: a lease fences only its own turn. */
export function checkKeyOfTurn(key: string, turn: string): void {
  if (turnOfKey(key) !== turn) throw new TypeError(`the journal key ${JSON.stringify(key)} is not of turn ${JSON.stringify(turn)}, whose lease was given`);
}

/** The turn's end, when its journal's last entry is one: a turn with entries after its `ended` is running again. */
export function endOf(entries: readonly JournalEntry[]): TurnEnded | undefined {
  const last = entries[entries.length - 1];
  return last?.kind === 'ended' ? last : undefined;
}

/** Whether a turn that ended as `ended` may be removed at `now` (its lease must not be live either: the store checks). */
export function mayPrune(ended: TurnEnded, options: Required<PruneOptions>, now: number): boolean {
  if (!(ended.at < options.finishedBefore)) return false;
  if (ended.suspendedUntil === undefined) return true;
  return options.suspended === 'expired' && ended.suspendedUntil <= now;
}

/**
 * The options of `prune`, checked, with defaults.
 * @throws {ConfigError} (`where: 'prune'`).
 */
export function checkPruneOptions(options: unknown): Required<PruneOptions> {
  if (!isRecord(options)) throw new ConfigError('prune', 'options', 'an object ({ finishedBefore })', options);
  const { finishedBefore, suspended = 'keep' } = options as Partial<PruneOptions>;
  if (typeof finishedBefore !== 'number' || Number.isNaN(finishedBefore)) throw new ConfigError('prune', 'finishedBefore', 'a time in epoch milliseconds (e.g. Date.now() - 7 * 86_400_000)', finishedBefore);
  if (suspended !== 'keep' && suspended !== 'expired') throw new ConfigError('prune', 'suspended', "'keep' or 'expired'", suspended);
  return { finishedBefore, suspended };
}
