// Durable turns: the journal's entries and the store that keeps them. (A leaf: imports only from types/.)
import type { Decision, TraceEntry } from './decision.js';
import type { PendingApproval } from './pendingApproval.js';
import type { ToolErrorCode } from './toolError.js';
import type { ResultStatus } from './toolResult.js';

/**
 * A finished call as the journal keeps it: its model-facing fields, serialisable, so that a resume
 * replays it exactly (id, name, index, status, content, error code and message) without running it.
 * `value` is kept when it has a JSON form (else it is absent, and `valueOmitted` says so).
 *
 * @example
 * ```ts
 * const finished: JournaledResult = { status: 'ok', content: '42', value: 42, started: true };
 * ```
 */
export interface JournaledResult {
  readonly status: Exclude<ResultStatus, 'suspended'>;
  readonly content: string;
  readonly value?: unknown;
  /** The value is the items of a streamed output (`ToolResult.streamed`). */
  readonly streamed?: boolean;
  readonly valueOmitted?: boolean;
  readonly error?: { readonly code: ToolErrorCode; readonly message: string };
  readonly started: boolean;
}

/**
 * One transition of one call, as the journal stores it, in the order it happened. Every call's life is
 * written ahead of its effect: `received` → `decided` → (`approval_pending` → `approval_answered`) →
 * `started` (durable before the body is invoked) → `finished` (durable before the result is given out).
 * One entry is the turn's, not a call's: `ended`, written when a run (or a resume) of the turn gave every
 * call its result — what `prune` goes by.
 *
 * @example
 * ```ts
 * const entry: JournalEntry = { kind: 'started', index: 0, at: Date.now() };
 * ```
 */
export type JournalEntry = CallEntry | TurnEnded;

/**
 * The turn's run ended with every call answered: finished, or suspended waiting for an approval. A
 * store knows a turn has ended when this is the last entry of its journal (a later resume appends
 * more, then an `ended` of its own when it ends too).
 *
 * @example
 * ```ts
 * const ended: TurnEnded = { kind: 'ended', at: Date.now(), suspendedUntil: Date.now() + 86_400_000 };
 * ```
 */
export interface TurnEnded {
  readonly kind: 'ended';
  readonly at: number;
  /**
   * Set when calls are still suspended: when the last of their approval tokens expires (epoch
   * milliseconds). Until then a human may still answer, so `prune` keeps the turn.
   */
  readonly suspendedUntil?: number;
}

/** One transition of one call (every entry but `ended`). */
export type CallEntry =
  | {
      readonly kind: 'received';
      readonly index: number;
      readonly id: string;
      readonly name: string;
      /** As sent: the JSON text, or the snapshot of an object. */
      readonly args: unknown;
      /** The arguments were cut off (an `IncompleteArguments`): the call must never run. */
      readonly incomplete?: { readonly reason: string; readonly partialText: string };
      readonly at: number;
    }
  | {
      readonly kind: 'decided';
      readonly index: number;
      readonly decision: Decision;
      /** The admitted arguments (the schema's output, after rewrites), as JSON data. */
      readonly args: unknown;
      readonly trace: readonly TraceEntry[];
      readonly at: number;
    }
  | {
      readonly kind: 'approval_pending';
      readonly index: number;
      /**
       * The call's approval — or, when its `callId` is `<call id>#<n>`, the approval of a sub-call the
       * call's program stopped on (journaled when the program stopped, every one it waits for).
       */
      readonly approval: PendingApproval;
      readonly at: number;
    }
  | {
      readonly kind: 'approval_answered';
      readonly index: number;
      readonly answer: 'allowed-once' | 'rejected';
      /** Set when it answers a sub-call of the call's program: the approval's token (sub-call ids repeat when a program runs again). */
      readonly token?: string;
      readonly at: number;
    }
  | { readonly kind: 'started'; readonly index: number; readonly at: number }
  | { readonly kind: 'finished'; readonly index: number; readonly result: JournaledResult; readonly at: number };

/**
 * The lease a process drives a turn with, as a store granted it: the turn, the process's owner id, and
 * the lease's **epoch** — a number that grows by one each time a process takes the turn. Every write the
 * driver makes carries it, and a store refuses a write whose lease is no longer the turn's current one,
 * so a process that stalled past its lease (a pause, a slow disk) cannot change a turn another process
 * took over (fencing).
 *
 * @example
 * ```ts
 * const epoch = await store.acquire(turn, owner, 30_000);
 * if (epoch !== undefined) await store.append(turn, entries, { turn, owner, epoch });
 * ```
 */
export interface TurnLease {
  readonly turn: string;
  readonly owner: string;
  readonly epoch: number;
}

/**
 * What {@link JournalStore.prune} removes: turns that ended before `finishedBefore` (epoch
 * milliseconds) with every call finished — and, with `suspended: 'expired'`, turns that ended with
 * calls suspended once every approval token of theirs has expired too. Never a turn that has not
 * ended, nor one whose lease is live.
 *
 * @example
 * ```ts
 * const week = 7 * 24 * 3_600_000;
 * const removed = await journal.prune({ finishedBefore: Date.now() - week, suspended: 'expired' });
 * ```
 */
export interface PruneOptions {
  readonly finishedBefore: number;
  /** Turns that ended with calls suspended: kept (`'keep'`, the default), or removed once every token of theirs expired (`'expired'`). */
  readonly suspended?: 'keep' | 'expired';
}

/**
 * Where durable turns are kept. Small on purpose — append, read, a fenced lease, a compare-and-set for
 * approvals, and pruning — so a store (memory, SQLite, Redis) holds no pipeline logic. Every method
 * may return a promise; an `append` that resolved `true` is durable: the pipeline waits for it before a
 * body starts and before a result is given out.
 *
 * Keys: a turn's journal is kept under the turn id; the sub-calls of a program (`run_code`) under a
 * key of their own, the turn id, a NUL character (`\u0000`) and the call's id — it belongs to the turn
 * (its lease fences it, `prune` removes it with the turn). Turn ids hold no NUL.
 *
 * Leases are fenced (see {@link TurnLease}): `acquire` gives a new epoch each time a process takes the
 * turn; `renew`, `release` and `append` act only while the lease given is still the turn's current
 * one (same owner, same epoch) — expired or not, as long as nobody took the turn since. A store keeps a
 * turn's epoch when its lease is released, so the next take gets a higher one.
 *
 * This is version 2 of the interface (toolstream 0.2): version 1's `lease(turn, owner, ms)` is now
 * `acquire` and `renew`, `append` and `release` take the lease, and `prune` is new (see CHANGELOG.md).
 *
 * @example
 * ```ts
 * const store: JournalStore = memoryJournal();
 * const epoch = (await store.acquire('conv-1/resp-1', 'me', 30_000))!;
 * await store.append('conv-1/resp-1', [{ kind: 'started', index: 0, at: Date.now() }], { turn: 'conv-1/resp-1', owner: 'me', epoch });
 * ```
 */
export interface JournalStore {
  /**
   * Appends entries to a key's journal, in order, atomically (all or none) — only if `lease` is the
   * current lease of its turn: `true` once appended, `false` (nothing appended) when another process
   * took the turn since, or the lease was released. The check and the append are one atomic step. An
   * empty batch writes nothing and is `true` without a check.
   */
  append(key: string, entries: readonly JournalEntry[], lease: TurnLease): boolean | Promise<boolean>;
  /** Every entry of a key's journal, in the order appended; empty for one never written. */
  read(key: string): readonly JournalEntry[] | Promise<readonly JournalEntry[]>;
  /**
   * Takes the turn's lease for `owner` until `now + ms`, when nobody holds a live one (never taken,
   * released, or expired) or `owner` does: resolves to the new epoch (the last one plus one; 1 for a
   * turn never leased), or `undefined` when another owner's lease is live. Atomic.
   */
  acquire(turn: string, owner: string, ms: number): number | undefined | Promise<number | undefined>;
  /**
   * Extends `lease` until `now + ms` if it is still the turn's current lease (expired or not): `true`;
   * `false` once another process took the turn, or the lease was released. Atomic.
   */
  renew(lease: TurnLease, ms: number): boolean | Promise<boolean>;
  /** Gives `lease` up if it is still the turn's current one; the epoch is kept. */
  release(lease: TurnLease): void | Promise<void>;
  /** Marks an approval's nonce used: true the first time, false ever after. Atomic (compare-and-set). */
  consume(turn: string, nonce: string): boolean | Promise<boolean>;
  /**
   * Removes the turns that ended as `options` says (their journals, their programs' journals, their
   * used nonces and leases), atomically per turn, and resolves to how many it removed.
   */
  prune(options: PruneOptions): number | Promise<number>;
  /** Releases what the store holds (connections, files). */
  close?(): void | Promise<void>;
}

/**
 * A {@link JournalStore} whose every method answers with a promise, as a store across the network does
 * (`redisJournal`, `postgresJournal`): what their journals are, beside what each adds of its own.
 *
 * @example
 * ```ts
 * const journal: AsyncJournalStore = redisJournal({ connection: 'redis://127.0.0.1:6379' });
 * const entries = await journal.read('conv-1/resp-1');
 * ```
 */
export interface AsyncJournalStore extends JournalStore {
  append(key: string, entries: readonly JournalEntry[], lease: TurnLease): Promise<boolean>;
  read(key: string): Promise<JournalEntry[]>;
  acquire(turn: string, owner: string, ms: number): Promise<number | undefined>;
  renew(lease: TurnLease, ms: number): Promise<boolean>;
  release(lease: TurnLease): Promise<void>;
  consume(turn: string, nonce: string): Promise<boolean>;
  prune(options: PruneOptions): Promise<number>;
  close(): Promise<void>;
}
