import { Observable, Subject } from 'rxjs';
import { expect } from 'vitest';
import type { JournalStore, ToolCall, ToolResult } from '../../src/index.js';

export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The journal, as seen by one process: `crash()` kills the process's view — every later call fails, as
 * a dead process writes nothing more — and the leases it held lapse, as they would on expiry.
 */
export class ProcessView implements JournalStore {
  #dead = false;
  readonly #owners = new Set<string>();
  constructor(private readonly shared: JournalStore) {}
  #alive(): void {
    if (this.#dead) throw new Error('this process is dead');
  }
  append(turn: string, entries: Parameters<JournalStore['append']>[1]) {
    this.#alive();
    return this.shared.append(turn, entries);
  }
  read(turn: string) {
    this.#alive();
    return this.shared.read(turn);
  }
  lease(turn: string, owner: string, ms: number) {
    this.#alive();
    this.#owners.add(owner);
    return this.shared.lease(turn, owner, ms);
  }
  release(turn: string, owner: string) {
    this.#alive();
    return this.shared.release(turn, owner);
  }
  consume(turn: string, nonce: string) {
    this.#alive();
    return this.shared.consume(turn, nonce);
  }
  crash(turn: string): void {
    this.#dead = true;
    for (const owner of this.#owners) void this.shared.release(turn, owner); // its lease lapses
  }
}

/** Lets a "process" run for `ticks` ticks, then crashes it unless it finished. */
export async function drive(view: ProcessView, run: Promise<ToolResult[]>, ticks: number, turn = 'turn'): Promise<ToolResult[] | 'crashed'> {
  let outcome: ToolResult[] | 'failed' | undefined;
  run.then((results) => (outcome = results), () => (outcome = 'failed'));
  for (let i = 0; i < ticks && outcome === undefined; i++) await tick();
  if (outcome === undefined || outcome === 'failed') {
    view.crash(turn);
    return 'crashed';
  }
  return outcome;
}

/** The nonce an approval token carries: what `consume` marks used (a test plays a process that consumed it). */
export const nonceOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { nonce: string }).nonce;

/** The calls as a model streams them: one a tick. */
export function arriving(calls: readonly ToolCall[]): Observable<ToolCall> {
  const source = new Subject<ToolCall>();
  void (async () => {
    for (const call of calls) {
      await tick();
      source.next(call);
    }
    source.complete();
  })();
  return source;
}

/**
 * Checks that a run answered the turn's calls in order, one result each. The calls a run answers are
 * those received before any crash — a prefix of the turn, fixed by the first run that completes.
 */
export function inTurnOrder(ids: readonly string[]): (results: readonly ToolResult[]) => void {
  let received: number | undefined;
  return (results) => {
    received ??= results.length;
    expect(results.map((r) => r.id)).toEqual(ids.slice(0, received));
    expect(results.map((r) => r.index)).toEqual(ids.slice(0, received).map((_, i) => i));
  };
}
