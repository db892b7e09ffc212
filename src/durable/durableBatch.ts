import { defer, finalize, Observable, tap, type OperatorFunction } from 'rxjs';
import { runInOrder, runStages } from '../engine/runStages.js';
import { runHooks } from '../engine/chains/hooks.js';
import type { BatchOptions } from '../engine/pool/batchOptions.js';
import { isWallClock } from '../stream/clock.js';
import { holdUntil } from '../stream/holdUntil.js';
import type { PipelineSettings } from '../engine/settings.js';
import type { CallView } from '../types/callView.js';
import type { CallHooks } from '../types/hooks.js';
import type { JournalEntry } from '../types/journal.js';
import type { PendingApproval } from '../types/pendingApproval.js';
import type { ToolCall } from '../types/toolCall.js';
import type { ToolResult } from '../types/toolResult.js';
import { describeError } from '../util/describe.js';
import { Later, thenOrNow, type MaybeLater } from '../util/later.js';
import { argsHash } from './canonical.js';
import { DurableTurnError } from './errors.js';
import { JournalHooks } from './journalHooks.js';
import { JournalWriter } from './journalWriter.js';
import { LeaseKeeper } from './leaseKeeper.js';
import { ProgramJournal } from './programJournal.js';
import type { DurableSettings, ResumePlan, SubBatchScope } from './settings.js';
import { journaledBound, resumeApprover } from './resumeBounds.js';
import { foldTurn, openApprovals } from './turnState.js';

/** Re-exported for the modules that name them with the batch. */
export type { DurableSettings, GivenAnswer, ResumePlan, SubBatchScope } from './settings.js';

/**
 * One durable batch: a run (or a resume) of one turn. It holds the turn's lease while it runs (a
 * `LeaseKeeper`: renewed, fenced, and once lost the batch stops), and journals every call's life through
 * one writer, from the engine's call hooks (`JournalHooks`: `received`, `decided`, `approval_answered`,
 * `finished`, `approval_pending` with a signed token from its `suspend` when the approver suspends a
 * call, and `started` from its execute middleware, outermost, before the body — the stages know
 * nothing of it), registered before the run's other layers (the events), and from the batch itself:
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
  /** The journal's call hooks. */
  readonly #journal: JournalHooks;
  /** The subscription ended and the lease was given up (undefined: at once, or no subscription yet). */
  #closed: MaybeLater<void> = undefined;
  /** The subscription ended: what its programs' sub-calls still do is not journaled (see `ProgramCall.ended`). */
  #ended = false;
  /** The subscription completed: every call of the run has its result. */
  #completed = false;
  /** The run's signal. */
  #signal: AbortSignal | undefined;

  constructor(
    private readonly settings: PipelineSettings,
    private readonly durable: DurableSettings,
    private readonly turn: string,
    private readonly plan?: ResumePlan,
    private readonly scope?: SubBatchScope,
  ) {
    const lease = (this.#lease = scope?.lease ?? new LeaseKeeper(durable.store, turn, durable.leaseMs, durable.scheduler));
    const key = scope?.key ?? turn;
    // At once when the store answers at once.
    const append = (entries: readonly JournalEntry[]): MaybeLater<void> =>
      thenOrNow(durable.store.append(key, entries, lease.fence()), (appended) => {
        if (appended !== true) throw lease.refused();
      });
    // On a virtual clock the writer cannot wait for a tick (real time): each durable() appends at once.
    const slotOf = scope === undefined ? undefined : (position: number) => scope.slotOf(position);
    const writer = (this.#writer = new JournalWriter(append, slotOf, !isWallClock(durable.scheduler)));
    const signal = () => this.#signal;
    const programJournal = (call: CallView) => this.#programJournal(call);
    this.#journal = new JournalHooks({ turn, plan, scope, writer, lease, signal, programJournal, suspend: (call) => this.#suspend(call) });
  }

  /**
   * Takes the turn's lease (and, for a first run, checks that the turn is new); it is renewed from then on.
   * At once when the store answers at once; never throws — a failure is a rejected `Later`.
   * @throws {DurableTurnError} `turn_leased` or `turn_exists`, or `journal_failed` when the store fails (as the rejection).
   */
  private open(): MaybeLater<void> {
    // A store that fails here (Redis away, a broken file) is the journal's failure, as it is mid-run: the
    // caller hears journal_failed, not the source's failure the engine would make of any other error.
    const failed = (error: unknown): DurableTurnError =>
      error instanceof DurableTurnError ? error : new DurableTurnError('journal_failed', `The journal of turn ${JSON.stringify(this.turn)} could not be leased or read: ${describeError(error)}`, { cause: error });
    let opened: MaybeLater<void>;
    try {
      opened = this.#take();
    } catch (error) {
      return Later.rejected(failed(error));
    }
    return opened instanceof Later
      ? opened.then(undefined, (error: unknown) => {
          throw failed(error);
        })
      : opened;
  }

  /** {@link open}'s work, whose failures it names. */
  #take(): MaybeLater<void> {
    const { store } = this.durable;
    const refuse = (error: DurableTurnError) => thenOrNow(this.#lease.release(), () => Later.rejected<void>(error));
    return thenOrNow(this.#lease.acquire(), (acquired) => {
      if (!acquired) {
        throw new DurableTurnError('turn_leased', `Turn ${JSON.stringify(this.turn)} is being driven by another process (its lease is live); try again once it ends.`);
      }
      return thenOrNow(store.read(this.turn), ({ length }) => {
        if (this.plan === undefined && length > 0) {
          return refuse(new DurableTurnError('turn_exists', `Turn ${JSON.stringify(this.turn)} has run already: resume it (pipeline.resume) instead of running it again.`));
        }
        // A resume was planned before its lease: another process may have driven the turn in between.
        if (this.plan !== undefined && length !== this.plan.entries) {
          return refuse(new DurableTurnError('turn_leased', `Turn ${JSON.stringify(this.turn)} was driven by another process while this resume was being planned; resume it again.`));
        }
        return undefined;
      });
    });
  }

  /**
   * Marks the turn ended if every call got its result, then gives the lease up at once, so another
   * request can resume the turn right after. Never fails: the run's own outcome is what the caller hears.
   */
  private close(): MaybeLater<void> {
    const release = () => this.#lease.release();
    if (!this.#completed || this.#lease.lost) return release();
    let ended: MaybeLater<void>;
    try {
      ended = thenOrNow(this.#endedEntry(), (entry) => {
        this.#writer.write(entry);
        return this.#writer.durable();
      });
    } catch {
      ended = undefined;
    }
    // Not marked ended if that failed: the turn is only kept longer (prune skips it), and a resume marks it.
    return ended instanceof Later ? ended.then(release, release) : release();
  }

  /** The turn's `ended` entry: with calls still suspended, until when the last of their approvals can be answered. */
  #endedEntry(): MaybeLater<JournalEntry> {
    const at = Date.now();
    if (!this.#journal.suspended) return { kind: 'ended', at };
    return thenOrNow(this.durable.store.read(this.turn), (entries) => {
      const open = openApprovals(foldTurn(entries));
      return open.length === 0 ? { kind: 'ended', at } : { kind: 'ended', at, suspendedUntil: Math.max(...open.map((approval) => approval.expiresAt)) };
    });
  }

  /**
   * The batch as an operator, for one subscription: it takes the lease (calls that arrive meanwhile
   * wait, none is lost), runs the journaled stages with results in model order, and gives the lease up
   * when the subscription ends — `closed` then resolves. `hooks` are the run's other layers' (layer
   * observers', the events'): called after the journal's at each point, in their order.
   */
  operator(signal: AbortSignal | undefined, hooks: readonly (CallHooks | undefined)[] = []): OperatorFunction<ToolCall, ToolResult> {
    this.#signal = signal;
    return (calls) =>
      defer(() => {
        const opened = this.open();
        const results = calls.pipe(
          holdUntil(opened),
          runInOrder(this.#settings(), signal, this.#hooks(hooks)),
          tap({ complete: () => (this.#completed = true) }),
        );
        // Closed as soon as the run ends, before its end is passed on: `closed` is then the lease's release.
        let closing = false;
        const close = () => {
          if (closing) return;
          closing = true;
          this.#ended = true;
          // Not opened (`turn_leased`, `turn_exists`, the store's error): there is nothing to close.
          this.#closed = opened instanceof Later ? opened.then(() => this.close(), () => undefined) : this.close();
        };
        return this.#untilLeaseLost(results).pipe(tap({ complete: close, error: close }), finalize(close));
      });
  }

  /**
   * The results until the lease is lost: then the output fails with `lease_lost`, and unsubscribing the
   * stages aborts every body in flight. Unsubscribed, the batch has ended *before* the stages are torn
   * down: a program's sub-calls that the teardown cancels are then not journaled (a store that appends
   * at once would otherwise record them `cancelled` — a resume must find them started, not finished).
   */
  #untilLeaseLost(results: Observable<ToolResult>): Observable<ToolResult> {
    return new Observable<ToolResult>((subscriber) => {
      subscriber.add(() => (this.#ended = true)); // first: the stages' teardown is added to `subscriber` after it
      results.subscribe(subscriber);
      this.#lease.onLost((error) => subscriber.error(error));
    });
  }

  /**
   * The journaled stages alone, results in completion order, without the lease: a program's sub-calls
   * (their program's call holds the turn's lease), in a pool run by `options`.
   */
  stages(signal: AbortSignal | undefined, options?: BatchOptions): OperatorFunction<ToolCall, ToolResult> {
    return runStages(this.#settings(), signal, this.#hooks([]), options);
  }

  /** The journal's hooks first, then the run's other layers'. */
  #hooks(hooks: readonly (CallHooks | undefined)[]) {
    return runHooks([this.#journal, ...hooks]);
  }

  /** Resolves once the subscription ended and the lease was given up. */
  get closed(): Promise<void> {
    return Promise.resolve(this.#closed);
  }

  #settings(): PipelineSettings {
    const { settings, plan } = this;
    if (plan === undefined) return settings;
    return {
      ...settings,
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

  /**
   * The approver suspended `record`: its pending approval, with a signed token — the one issued before
   * when a resume suspends it again (same arguments, not expired, not answered), else a new one, journaled.
   */
  #suspend(record: CallView): PendingApproval | undefined {
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
  #programJournal(call: CallView): ProgramJournal {
    return new ProgramJournal({
      durable: this.durable,
      turn: this.turn,
      index: call.index,
      id: call.id,
      ranBefore: this.plan?.journaled.get(call.index)?.started === true,
      answers: this.plan?.programAnswers.get(call.index) ?? [],
      answered: this.plan?.journaled.get(call.index)?.program?.answered ?? new Map(),
      writer: this.#writer,
      flush: () => this.#journal.flush(),
      ended: () => this.#ended,
      lease: this.#lease,
      subBatch: (settings, options, durable, plan, scope, signal) => new DurableBatch(settings, durable, this.turn, plan, scope).stages(signal, options),
    });
  }
}
