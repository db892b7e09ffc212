import type { Decision, TraceEntry } from '../policy/types.js';
import type { ToolErrorCode } from '../toolError.js';
import type { ResultStatus } from '../toolResult.js';

/**
 * An approval a suspended call waits for: what a human is asked, and the token that answers it. The
 * token is signed (HMAC-SHA256 with the pipeline's `approvalSecret`) over the turn, the call, the
 * admitted arguments and a nonce, and expires: it answers this call, with these arguments, once.
 *
 * @example
 * ```ts
 * for (const approval of await pipeline.pendingApprovals(turn)) {
 *   console.log(`${approval.tool}(${JSON.stringify(approval.args)})? ${approval.reasons.join('; ')}`);
 *   sendToHuman(approval.token);
 * }
 * ```
 */
export interface PendingApproval {
  readonly turn: string;
  /** The call's id; for a sub-call of a program (`run_code`), the sub-call's: `<call id>#<n>`. */
  readonly callId: string;
  /** The call's index in its turn (for a sub-call, its program's call's). */
  readonly index: number;
  /** The tool's name (for a sub-call, the tool the program called). */
  readonly tool: string;
  /** The arguments the body will receive if approved (the admitted snapshot). */
  readonly args: unknown;
  /** The reasons the policies gave for asking. */
  readonly reasons: readonly string[];
  /** Answers this approval, once: pass it to `resume(turn, { answers: [{ token, answer }] })`. */
  readonly token: string;
  /** When the token stops being accepted (epoch milliseconds). */
  readonly expiresAt: number;
}

/**
 * A human's answer to a pending approval, given to `resume`.
 *
 * @example
 * ```ts
 * const answer: ApprovalResponse = { token: approval.token, answer: 'allowed-once' };
 * await pipeline.resume(turn, { answers: [answer] });
 * ```
 */
export interface ApprovalResponse {
  readonly token: string;
  readonly answer: 'allowed-once' | 'rejected';
}

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
 *
 * @example
 * ```ts
 * const entry: JournalEntry = { kind: 'started', index: 0, at: Date.now() };
 * ```
 */
export type JournalEntry =
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
 * Where durable turns are kept. Small on purpose — append, read, a lease, and a compare-and-set for
 * approvals — so a store (memory, SQLite, Redis) holds no pipeline logic. Every method may return a
 * promise; an `append` that resolved is durable: the pipeline waits for it before a body starts and
 * before a result is given out. A turn's key is the turn id; the sub-calls of a program (`run_code`)
 * are kept under a key of their own: the turn id, a NUL character (`\u0000`), and the call's id.
 *
 * @example
 * ```ts
 * const store: JournalStore = memoryJournal();
 * await store.append('conv-1/resp-1', [{ kind: 'started', index: 0, at: Date.now() }]);
 * ```
 */
export interface JournalStore {
  /** Appends entries to a turn's journal, in order, atomically (all or none). */
  append(turn: string, entries: readonly JournalEntry[]): void | Promise<void>;
  /** Every entry of a turn, in the order appended; empty for a turn never written. */
  read(turn: string): readonly JournalEntry[] | Promise<readonly JournalEntry[]>;
  /**
   * Takes or renews the turn's lease for `owner` until `now + ms`: succeeds when nobody holds it, when
   * `owner` does, or when the holder's lease has expired. Atomic.
   */
  lease(turn: string, owner: string, ms: number): boolean | Promise<boolean>;
  /** Gives the lease up, if `owner` holds it. */
  release(turn: string, owner: string): void | Promise<void>;
  /** Marks an approval's nonce used: true the first time, false ever after. Atomic (compare-and-set). */
  consume(turn: string, nonce: string): boolean | Promise<boolean>;
  /** Releases what the store holds (connections, files). */
  close?(): void | Promise<void>;
}
