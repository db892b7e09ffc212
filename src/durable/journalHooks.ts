import { CALL_NAME } from '../engine/records/callSlots.js';
import { approvalPending } from '../engine/stages/guard.js';
import type { CallView } from '../types/callView.js';
import type { ExecuteMiddleware } from '../types/execute.js';
import type { CallHooks, ReceivedVerdict } from '../types/hooks.js';
import type { PendingApproval } from '../types/pendingApproval.js';
import type { ToolResult } from '../types/toolResult.js';
import { describeError } from '../util/describe.js';
import { IncompleteArguments } from '../util/incompleteArguments.js';
import type { MaybeLater } from '../util/later.js';
import { outcome } from '../util/outcome.js';
import { isDurableProgram, PROGRAM_JOURNAL } from './durableProgram.js';
import { DurableTurnError } from './errors.js';
import { asData, journaledResult } from './journaledResult.js';
import type { JournalWriter } from './journalWriter.js';
import type { LeaseKeeper } from './leaseKeeper.js';
import type { ProgramJournal } from './programJournal.js';
import { DURABLE_CALL } from './reattach.js';
import { runsAgain } from './resumeBounds.js';
import type { ResumePlan, SubBatchScope } from './settings.js';
import { openProgramApprovals, type JournaledCall } from './turnState.js';

/** What the journal of one durable batch writes with, and what it asks its batch for. */
export interface JournalOf {
  readonly turn: string;
  /** Resuming: what the turn's journal holds, and the answers given. */
  readonly plan: ResumePlan | undefined;
  /** A program's sub-calls: where they are kept in its call's journal. */
  readonly scope: SubBatchScope | undefined;
  readonly writer: JournalWriter;
  readonly lease: LeaseKeeper;
  /** The run's signal, once the batch runs as the turn (a program's sub-calls have none here). */
  readonly signal: () => AbortSignal | undefined;
  /** The journal of a program's call's sub-calls. */
  readonly programJournal: (call: CallView) => ProgramJournal;
  /** The approver suspended the call: its pending approval, journaled with a signed token (undefined: it fails closed). */
  readonly suspend: (call: CallView) => PendingApproval | undefined;
}

/**
 * The journal of a durable batch as a layer of call hooks — the stages know nothing of it:
 * - `received`: the call's `received` entry (index, id, name, the arguments as sent) — or, resuming, a
 *   verdict from what the journal holds: a call that finished is replayed (never run again); one that
 *   started and never finished is answered `outcome_unknown` where it would have run, unless its tool is
 *   idempotent, a program or re-attaching; aborted, one that waits for a human stays suspended;
 * - `decided`: the `decided` entry (decision, admitted arguments, trace), and the call's slots (its
 *   durable name, a program's journal);
 * - `execute`, the run's outermost execute middleware: before the first attempt the `started` entry,
 *   and before every attempt everything written durable and the lease known live — so no body runs
 *   unrecorded, nor once another process took the turn (else the call fails closed, its body unrun);
 * - `approvalAnswered`: the answer, unless a resume's answer journals itself;
 * - `suspend`: the approver suspended the call: its `approval_pending` entry with a signed token;
 * - `finished`: the `finished` entry, durable before the result is given out: the hook's `Later` holds
 *   the result (nothing when the store appended it at once); a store failure fails the run
 *   (`journal_failed`; a lost lease stays `lease_lost`).
 *
 * @example
 * ```ts
 * const journal = new JournalHooks({ turn, plan, scope, writer, lease, signal: () => signal, programJournal, suspend });
 * calls$.pipe(runStages(settings, signal, runHooks([journal, eventHooks])));
 * ```
 */
export class JournalHooks implements CallHooks {
  /** A call ended suspended: the turn's `ended` entry says until when its approvals can be answered. */
  suspended = false;
  /** The write-ahead of a body: see {@link writeAhead}. */
  readonly execute: ExecuteMiddleware;

  constructor(private readonly journal: JournalOf) {
    this.execute = writeAhead(journal, this.#journalFailed);
  }

  received(call: CallView): ReceivedVerdict | undefined {
    const journaled = this.journal.plan?.journaled.get(call.index);
    if (journaled !== undefined) return this.#restored(call, journaled);
    const raw = call.rawArgs;
    const incomplete = raw instanceof IncompleteArguments ? { reason: raw.reason, partialText: raw.partialText } : undefined;
    const entry = { kind: 'received', index: call.index, id: call.id, name: call.name, at: Date.now() } as const;
    this.journal.writer.write(incomplete === undefined ? { ...entry, args: raw } : { ...entry, args: null, incomplete });
    return undefined;
  }

  decided(call: CallView): void {
    const { writer, plan, scope, turn } = this.journal;
    if (call.decision !== undefined && (call.status === undefined || call.status === 'denied')) {
      writer.write({ kind: 'decided', index: call.index, decision: call.decision, args: asData(call.args), trace: call.trace ?? [], at: Date.now() });
    }
    if (call.status !== undefined) return;
    const { slots } = call;
    if (isDurableProgram(call.tool)) slots.set(PROGRAM_JOURNAL, this.journal.programJournal(call));
    // Named by its journal key and slot: a program's sub-call is not its turn's call of the same index.
    const key = scope?.key ?? turn;
    const index = scope?.slotOf(call.index) ?? call.index;
    slots.set(DURABLE_CALL, { turn: key, index, resumed: plan?.journaled.get(call.index)?.started === true, leaseHeld: this.#leaseHeld });
    slots.set(CALL_NAME, ['durable', key, index]); // its idempotency key: the same after a resume, in any process
  }

  approvalAnswered(call: CallView, approved: boolean, answer: string): void {
    if (this.journal.plan?.answers.has(call.index) === true) return; // a resume's answers journal themselves
    const at = Date.now();
    if (approved) this.journal.writer.write({ kind: 'approval_answered', index: call.index, answer: 'allowed-once', at });
    else if (answer === 'approval_rejected') this.journal.writer.write({ kind: 'approval_answered', index: call.index, answer: 'rejected', at });
  }

  suspend(call: CallView): PendingApproval | undefined {
    return this.journal.suspend(call);
  }

  finished(result: ToolResult): MaybeLater<void> {
    if (result.status === 'suspended') this.suspended = true;
    else if (this.journal.plan?.journaled.get(result.index)?.finished === undefined) {
      this.journal.writer.write({ kind: 'finished', index: result.index, result: journaledResult(result), at: Date.now() });
    }
    return this.flush();
  }

  /**
   * Everything written is durable: nothing to wait for when it is already, or the store appended it at
   * once; else a `Later`. A store failure becomes a `journal_failed` error (a lost lease stays `lease_lost`).
   */
  flush(): MaybeLater<void> {
    const durable = this.journal.writer.durable();
    return durable === undefined ? undefined : durable.then(undefined, this.#journalFailed);
  }

  readonly #leaseHeld = (): boolean => !this.journal.lease.lost;

  readonly #journalFailed = (error: unknown): never => {
    if (error instanceof DurableTurnError) throw error;
    throw new DurableTurnError('journal_failed', `The journal of turn ${JSON.stringify(this.journal.turn)} could not be written: ${describeError(error)}`, { cause: error });
  };

  /**
   * Resuming: a call that finished is replayed; one that started and never finished is not run again —
   * unless its tool is idempotent, a program (it runs again, its sub-calls answered from its journal), or
   * re-attaching (its body finds the job it started before).
   */
  #restored(call: CallView, journaled: JournaledCall): ReceivedVerdict | undefined {
    if (journaled.finished !== undefined) return { kind: 'replay', result: journaled.finished };
    // Aborted before it could ask again: a call that waits for a human stays suspended as journaled —
    // an abort ends this run, not the question (else its cancellation would be journaled for good).
    const waiting = this.journal.signal()?.aborted === true ? this.#waitingFor(call.index, journaled) : undefined;
    if (waiting !== undefined) return { kind: 'suspended', error: approvalPending(call.name, waiting.reasons, waiting) };
    if (journaled.started && call.tool?.idempotent !== true && !runsAgain(call.tool)) {
      const message = 'it was started by a process that stopped before it finished; it may or may not have taken effect, and it is not run again (it is not idempotent).';
      return { kind: 'in-place', outcome: outcome.unknown(message) };
    }
    return undefined;
  }

  /** The approval a resumed call still waits for — its own, or its program's first — when this resume answers none of them. */
  #waitingFor(index: number, call: JournaledCall): PendingApproval | undefined {
    const { plan } = this.journal;
    if (plan === undefined || plan.answers.has(index) || plan.programAnswers.has(index)) return undefined;
    return call.answered === undefined && call.pending !== undefined ? call.pending : openProgramApprovals(call)[0];
  }
}

/**
 * The journal's execute middleware (named `journal` in a failure's trace), outermost around each attempt
 * of each call: the first attempt writes the call's `started` entry — once per call, as the journal
 * keeps it; then, before every attempt, it waits until everything written is durable and the lease is
 * known live (renewed first if the last renewal is older than a round: a process that stalled past its
 * lease starts nothing). Only then `next()`: the body runs. A store failure (`journal_failed`) or a lost
 * lease (`lease_lost`) is the middleware's own failure, so the call fails closed without its body — and
 * the run fails with it, as the writer stays failed and the lease lost.
 *
 * With a store that answers at once and a lease known live it returns `next()` itself, synchronously:
 * nothing between the chain and the body waits (a marble test's virtual time reaches the body).
 */
function writeAhead({ writer, lease }: JournalOf, journalFailed: (error: unknown) => never): ExecuteMiddleware {
  // Nothing if the lease is known live, else the renewal to wait for; throws once it is lost.
  const startsNow = (): MaybeLater<void> => lease.ensureHeld();
  return function journal(ctx, next) {
    if (ctx.attempt === 1) writer.write({ kind: 'started', index: ctx.index, at: Date.now() });
    const durable = writer.durable();
    const held = durable === undefined ? startsNow() : durable.then(startsNow, journalFailed);
    return held === undefined ? next() : held.then(() => next());
  };
}
