import { defer, finalize, Observable, tap, type OperatorFunction } from 'rxjs';
import { runStages, type StageTaps } from '../engine/runStages.js';
import type { RunHooks } from '../engine/chains/hooks.js';
import { IncompleteArguments } from '../util/incompleteArguments.js';
import { awaitEach } from '../stream/awaitEach.js';
import { holdUntil } from '../stream/holdUntil.js';
import type { CallRecord } from '../engine/records/callRecord.js';
import { describeError } from '../util/describe.js';
import { CALL_NAME } from '../engine/records/callSlots.js';
import type { PipelineSettings } from '../engine/settings.js';
import { approvalPending } from '../engine/stages/guard.js';
import { reorderByIndex } from '../engine/stages/reorder.js';
import type { JournalEntry } from '../types/journal.js';
import type { PendingApproval } from '../types/pendingApproval.js';
import type { ToolCall } from '../types/toolCall.js';
import type { ToolResult } from '../types/toolResult.js';
import { argsHash } from './canonical.js';
import { DurableTurnError } from './errors.js';
import { asData, journaledResult, replay } from './journaledResult.js';
import { JournalWriter } from './journalWriter.js';
import { LeaseKeeper } from './leaseKeeper.js';
import { isDurableProgram, PROGRAM_JOURNAL } from './durableProgram.js';
import { ProgramJournal } from './programJournal.js';
import { DURABLE_CALL } from './reattach.js';
import type { DurableSettings, ResumePlan, SubBatchScope } from './settings.js';
import { journaledBound, resumeApprover, runsAgain } from './resumeBounds.js';
import { foldTurn, openApprovals, openProgramApprovals, type JournaledCall } from './turnState.js';

/** Re-exported for the modules that name them with the batch. */
export type { DurableSettings, GivenAnswer, ResumePlan, SubBatchScope } from './settings.js';

/**
 * One durable batch: a run (or a resume) of one turn. It holds the turn's lease while it runs (a
 * `LeaseKeeper`: renewed, fenced, and once lost the batch stops), and journals every call's life through
 * one writer, from taps between the stages — the stages know nothing of it:
 * - after intake: `received` (index, id, name, the arguments as sent) — or, resuming, the journaled
 *   outcome of calls that finished (replayed, never run again) and `outcome_unknown` for calls that
 *   started and never finished, unless their tool is `idempotent`;
 * - after pre-execute: `decided` (decision, admitted arguments, trace), and a start check that writes
 *   `started` and waits until it is durable — and the lease is known live — so no body runs unrecorded,
 *   nor once another process took the turn;
 * - the guard's approvals: `approval_pending` with a signed token when the approver suspends a call,
 *   `approval_answered` when it is answered;
 * - the results: `finished`, durable before the result is given out;
 * - the end: `ended`, once every call has its result (what `prune` goes by).
 * Every append carries the lease: a store refuses it once another process took the turn, and the batch
 * then stops at once — no body starts, those in flight see their signal abort, and the run fails with
 * `DurableTurnError` `lease_lost`; the process that took the turn answers what was left.
 *
 * Resuming, the journaled decision bounds what today's policies decide: it is the outermost pre
 * policy, folded after the whole chain (whatever a policy inside does or skips), so it can only
 * tighten it; suspended calls are answered by the answers given (a consumed token, once).
 *
 * A program's call (`run_code`) gets a journal for its sub-calls (`ProgramJournal`), and is run again
 * on resume — its sub-calls that finished are answered from that journal, not run. Its sub-calls are a
 * batch of this class too, under a `SubBatchScope`, with a plan that grows as the program makes them.
 */
export class DurableBatch {
  readonly #lease: LeaseKeeper;
  readonly #writer: JournalWriter;
  #closed: Promise<void> = Promise.resolve();
  /** The subscription ended: what its programs' sub-calls still do is not journaled (see `ProgramCall.ended`). */
  #ended = false;
  /** The subscription completed: every call of the run has its result. */
  #completed = false;
  /** A call ended suspended: the turn's `ended` entry says until when its approvals can be answered. */
  #suspended = false;
  /** The run's signal. */
  #signal: AbortSignal | undefined;

  constructor(
    private readonly settings: PipelineSettings,
    private readonly durable: DurableSettings,
    private readonly turn: string,
    private readonly plan?: ResumePlan,
    private readonly scope?: SubBatchScope,
  ) {
    const lease = (this.#lease = scope?.lease ?? new LeaseKeeper(durable.store, turn, durable.leaseMs));
    const key = scope?.key ?? turn;
    const append = async (entries: readonly JournalEntry[]): Promise<void> => {
      if ((await durable.store.append(key, entries, lease.fence())) !== true) throw lease.refused();
    };
    this.#writer = new JournalWriter(append, scope === undefined ? undefined : (position) => scope.slotOf(position));
  }

  /**
   * Takes the turn's lease (and, for a first run, checks that the turn is new); it is renewed from then on.
   * @throws {DurableTurnError} `turn_leased` or `turn_exists`.
   */
  private async open(): Promise<void> {
    const { store } = this.durable;
    if (!(await this.#lease.acquire())) {
      throw new DurableTurnError('turn_leased', `Turn ${JSON.stringify(this.turn)} is being driven by another process (its lease is live); try again once it ends.`);
    }
    if (this.plan === undefined && (await store.read(this.turn)).length > 0) {
      await this.#lease.release();
      throw new DurableTurnError('turn_exists', `Turn ${JSON.stringify(this.turn)} has run already: resume it (pipeline.resume) instead of running it again.`);
    }
    // A resume was planned before its lease: another process may have driven the turn in between.
    if (this.plan !== undefined && (await store.read(this.turn)).length !== this.plan.entries) {
      await this.#lease.release();
      throw new DurableTurnError('turn_leased', `Turn ${JSON.stringify(this.turn)} was driven by another process while this resume was being planned; resume it again.`);
    }
  }

  /**
   * Marks the turn ended if every call got its result, then gives the lease up at once, so another
   * request can resume the turn right after. Never throws: the run's own outcome is what the caller hears.
   */
  private async close(): Promise<void> {
    if (this.#completed && !this.#lease.lost) {
      try {
        this.#writer.write(await this.#endedEntry());
        await this.#writer.durable();
      } catch {
        // Not marked ended: the turn is only kept longer (prune skips it), and a resume marks it.
      }
    }
    await this.#lease.release();
  }

  /** The turn's `ended` entry: with calls still suspended, until when the last of their approvals can be answered. */
  async #endedEntry(): Promise<JournalEntry> {
    const at = Date.now();
    if (!this.#suspended) return { kind: 'ended', at };
    const open = openApprovals(foldTurn(await this.durable.store.read(this.turn)));
    return open.length === 0 ? { kind: 'ended', at } : { kind: 'ended', at, suspendedUntil: Math.max(...open.map((approval) => approval.expiresAt)) };
  }

  /**
   * The batch as an operator, for one subscription: it takes the lease (calls that arrive meanwhile
   * wait, none is lost), runs the journaled stages with results in model order, and gives the lease up
   * when the subscription ends — `closed` then resolves.
   */
  operator(signal: AbortSignal | undefined, hooks?: RunHooks): OperatorFunction<ToolCall, ToolResult> {
    this.#signal = signal;
    return (calls) =>
      defer(() => {
        const opened = this.open();
        const results = calls.pipe(
          holdUntil(opened),
          this.stages(signal, hooks),
          reorderByIndex(),
          tap({ complete: () => (this.#completed = true) }),
        );
        // Closed as soon as the run ends, before its end is passed on: `closed` is then the lease's release.
        let closing = false;
        const close = () => {
          if (closing) return;
          closing = true;
          this.#ended = true;
          this.#closed = opened.then(() => this.close(), () => undefined);
        };
        return this.#untilLeaseLost(results).pipe(tap({ complete: close, error: close }), finalize(close));
      });
  }

  /** The results until the lease is lost: then the output fails with `lease_lost`, and unsubscribing the stages aborts every body in flight. */
  #untilLeaseLost(results: Observable<ToolResult>): Observable<ToolResult> {
    return new Observable<ToolResult>((subscriber) => {
      const subscription = results.subscribe(subscriber);
      this.#lease.onLost((error) => subscriber.error(error));
      return subscription;
    });
  }

  /**
   * The journaled stages alone, results in completion order, without the lease: a program's sub-calls
   * (their program's call holds the turn's lease).
   */
  stages(signal: AbortSignal | undefined, hooks?: RunHooks): OperatorFunction<ToolCall, ToolResult> {
    return runStages(this.#settings(), signal, this.#taps(), hooks);
  }

  /** Resolves once the subscription ended and the lease was given up. */
  get closed(): Promise<void> {
    return this.#closed;
  }

  #settings(): PipelineSettings {
    const { settings, plan } = this;
    const suspend = (record: CallRecord) => this.#suspend(record);
    if (plan === undefined) return { ...settings, suspend };
    return {
      ...settings,
      suspend,
      pre: [journaledBound(plan), ...settings.pre],
      preNames: ['(journal)', ...settings.preNames],
      approve: resumeApprover({
        plan,
        approve: settings.approve,
        store: this.durable.store,
        turn: this.turn,
        answered: (index, given) => {
          this.#writer.write({ kind: 'approval_answered', index, answer: given.answer, at: Date.now() });
          this.scope?.answered(given.token, given.answer);
        },
      }),
    };
  }

  #taps(): StageTaps {
    const writer = this.#writer;
    const at = Date.now;
    return {
      received: tap((record) => {
        const journaled = this.plan?.journaled.get(record.index);
        if (journaled !== undefined) return this.#restore(record, journaled);
        const raw = record.rawArgs;
        const incomplete = raw instanceof IncompleteArguments ? { reason: raw.reason, partialText: raw.partialText } : undefined;
        const entry = { kind: 'received', index: record.index, id: record.id, name: record.name, at: at() } as const;
        writer.write(incomplete === undefined ? { ...entry, args: raw } : { ...entry, args: null, incomplete });
      }),
      decided: tap((record) => {
        if (record.decision !== undefined && (record.status === undefined || record.status === 'denied')) {
          writer.write({ kind: 'decided', index: record.index, decision: record.decision, args: asData(record.args), trace: record.trace ?? [], at: at() });
        }
        if (record.status !== undefined) return;
        if (isDurableProgram(record.tool)) record.set(PROGRAM_JOURNAL, this.#programJournal(record));
        // Named by its journal key and slot: a program's sub-call is not its turn's call of the same index.
        const { scope } = this;
        const turn = scope?.key ?? this.turn;
        const index = scope?.slotOf(record.index) ?? record.index;
        record.set(DURABLE_CALL, { turn, index, resumed: this.plan?.journaled.get(record.index)?.started === true, leaseHeld: this.#leaseHeld });
        record.set(CALL_NAME, ['durable', turn, index]); // its idempotency key: the same after a resume, in any process
        // The last check before the body: `started` is durable before it is invoked.
        record.addStartCheck({
          policy: '(journal)',
          check: () => {
            writer.write({ kind: 'started', index: record.index, at: at() });
            // A process that stalled past its lease starts nothing: the lease is known live, or renewed first.
            return this.#writer.durable().then(this.#startsNow, this.#journalFailed);
          },
        });
      }),
      admitted: tap((record) => {
        if (record.decision !== 'ask' || this.plan?.answers.has(record.index) === true) return; // answers journal themselves
        if (record.status === undefined) writer.write({ kind: 'approval_answered', index: record.index, answer: 'allowed-once', at: at() });
        else if (record.error?.code === 'approval_rejected') writer.write({ kind: 'approval_answered', index: record.index, answer: 'rejected', at: at() });
      }),
      finished: awaitEach((result) => {
        if (result.status === 'suspended') this.#suspended = true;
        if (result.status !== 'suspended' && !(this.plan?.journaled.get(result.index)?.finished !== undefined)) {
          writer.write({ kind: 'finished', index: result.index, result: journaledResult(result), at: at() });
        }
        return this.#durable();
      }),
    };
  }

  /** Everything written is durable; a store failure becomes a `journal_failed` error (a lost lease stays `lease_lost`). */
  #durable(): Promise<void> {
    return this.#writer.durable().catch(this.#journalFailed);
  }

  readonly #leaseHeld = (): boolean => !this.#lease.lost;

  /** Once a call's `started` is durable: nothing if the lease is known live (no promise), else the renewal to wait for. */
  readonly #startsNow = (): PromiseLike<undefined> | undefined => this.#lease.ensureHeld() as PromiseLike<undefined> | undefined;

  readonly #journalFailed = (error: unknown): never => {
    if (error instanceof DurableTurnError) throw error;
    throw new DurableTurnError('journal_failed', `The journal of turn ${JSON.stringify(this.turn)} could not be written: ${describeError(error)}`, { cause: error });
  };

  /**
   * The approver suspended `record`: its pending approval, with a signed token — the one issued before
   * when a resume suspends it again (same arguments, not expired, not answered), else a new one, journaled.
   */
  #suspend(record: CallRecord): PendingApproval | undefined {
    try {
      const { tokens, approvalTtlMs } = this.durable;
      const hash = argsHash(record.args);
      const journaled = this.plan?.journaled.get(record.index);
      // A token already answered (an idempotent call that is run again after a crash) is used up.
      const previous = journaled?.answered === undefined ? journaled?.pending : undefined;
      if (previous !== undefined && previous.expiresAt > Date.now()) {
        const claims = tokens.check(previous.token);
        if (typeof claims === 'object' && claims.argsHash === hash) return previous;
      }
      const expiresAt = Date.now() + approvalTtlMs;
      const { token } = tokens.issue({ turn: this.turn, callId: record.id, argsHash: hash, expiresAt });
      const approval: PendingApproval = Object.freeze({
        turn: this.turn,
        callId: record.id,
        index: this.scope?.callIndex ?? record.index,
        tool: record.name,
        args: record.args,
        reasons: record.reasons,
        token,
        expiresAt,
      });
      this.#writer.write({ kind: 'approval_pending', index: record.index, approval, at: Date.now() });
      return approval;
    } catch {
      return undefined; // arguments without a JSON form cannot be signed: the call fails closed
    }
  }

  /**
   * The journal of the sub-calls of a program's call: what its earlier runs journaled (only a call that
   * started before has any), and the answers given to its sub-calls' approvals.
   */
  #programJournal(record: CallRecord): ProgramJournal {
    return new ProgramJournal({
      durable: this.durable,
      turn: this.turn,
      index: record.index,
      id: record.id,
      ranBefore: this.plan?.journaled.get(record.index)?.started === true,
      answers: this.plan?.programAnswers.get(record.index) ?? [],
      answered: this.plan?.journaled.get(record.index)?.program?.answered ?? new Map(),
      writer: this.#writer,
      flush: () => this.#durable(),
      ended: () => this.#ended,
      lease: this.#lease,
      subBatch: (settings, durable, plan, scope, signal) => new DurableBatch(settings, durable, this.turn, plan, scope).stages(signal),
    });
  }

  /**
   * Resuming: a call that finished is replayed; one that started and never finished is not run again —
   * unless its tool is idempotent, a program (it runs again, its sub-calls answered from its journal), or
   * re-attaching (its body finds the job it started before).
   */
  #restore(record: CallRecord, call: JournaledCall): void {
    if (call.finished !== undefined) return replay(record, call.finished);
    // Aborted before it could ask again: a call that waits for a human stays suspended as journaled —
    // an abort ends this run, not the question (else its cancellation would be journaled for good).
    const waiting = this.#signal?.aborted === true ? this.#waitingFor(record.index, call) : undefined;
    if (waiting !== undefined) return record.fail('suspended', approvalPending(record.name, waiting.reasons, waiting));
    if (call.started && record.tool?.idempotent !== true && !runsAgain(record.tool)) {
      record.fail('error', {
        code: 'outcome_unknown',
        message: `Tool "${record.name}" was started by a process that stopped before it finished; it may or may not have taken effect, and it is not run again (it is not idempotent).`,
      });
    }
  }

  /** The approval a resumed call still waits for — its own, or its program's first — when this resume answers none of them. */
  #waitingFor(index: number, call: JournaledCall): PendingApproval | undefined {
    const { plan } = this;
    if (plan === undefined || plan.answers.has(index) || plan.programAnswers.has(index)) return undefined;
    return call.answered === undefined && call.pending !== undefined ? call.pending : openProgramApprovals(call)[0];
  }
}
