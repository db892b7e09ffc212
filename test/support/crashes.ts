import { Observable, Subject } from 'rxjs';
import { expect } from 'vitest';
import type { JournalEntry, JournalStore, PruneOptions, ToolCall, ToolResult, TurnLease } from '../../src/index.js';

export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The journal, as seen by one process: `crash()` kills the process's view — every later call fails, as
 * a dead process writes nothing more — and the leases it held lapse, as they would on expiry.
 */
export class ProcessView implements JournalStore {
  #dead = false;
  readonly #leases: TurnLease[] = [];
  constructor(private readonly shared: JournalStore) {}
  #alive(): void {
    if (this.#dead) throw new Error('this process is dead');
  }
  append(key: string, entries: Parameters<JournalStore['append']>[1], lease: TurnLease) {
    this.#alive();
    return this.shared.append(key, entries, lease);
  }
  read(key: string) {
    this.#alive();
    return this.shared.read(key);
  }
  async acquire(turn: string, owner: string, ms: number) {
    this.#alive();
    const epoch = await this.shared.acquire(turn, owner, ms);
    if (epoch !== undefined) this.#leases.push({ turn, owner, epoch });
    return epoch;
  }
  renew(lease: TurnLease, ms: number) {
    this.#alive();
    return this.shared.renew(lease, ms);
  }
  release(lease: TurnLease) {
    this.#alive();
    return this.shared.release(lease);
  }
  consume(turn: string, nonce: string) {
    this.#alive();
    return this.shared.consume(turn, nonce);
  }
  prune(options: PruneOptions) {
    this.#alive();
    return this.shared.prune(options);
  }
  crash(_turn?: string): void {
    this.#dead = true;
    for (const lease of this.#leases) void this.shared.release(lease); // its lease lapses
  }
}

/**
 * Appends what a process wrote, as that process would: taking the turn's lease for it, appending under
 * it, giving it up. For tests that set up the journal a stopped process left behind.
 */
export async function appendAsProcess(store: JournalStore, key: string, entries: readonly JournalEntry[]): Promise<void> {
  const turn = key.split('\u0000')[0]!;
  const owner = `a process of the test (${Math.random()})`;
  const epoch = await store.acquire(turn, owner, 60_000);
  if (epoch === undefined) throw new Error(`turn ${turn} is leased`);
  const lease = { turn, owner, epoch };
  expect(await store.append(key, entries, lease)).toBe(true);
  await store.release(lease);
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
