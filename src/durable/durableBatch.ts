import { randomUUID } from 'node:crypto';
import { defer, finalize, tap, type OperatorFunction } from 'rxjs';
import { runStages, type StageTaps } from '../createPipeline.js';
import { composeTaps } from '../internal/composeTaps.js';
import { IncompleteArguments } from '../incompleteArguments.js';
import { awaitEach } from '../internal/awaitEach.js';
import { holdUntil } from '../internal/holdUntil.js';
import type { CallRecord } from '../internal/callRecord.js';
import { describeError, describeValue } from '../internal/describe.js';
import { attachProgramJournal, isDurableProgram } from '../internal/durableProgram.js';
import { attachDurableCall, isReattaching } from '../internal/reattach.js';
import { snapshotValue } from '../internal/snapshot.js';
import type { PipelineSettings } from '../options.js';
import type { Approver, PrePolicy } from '../policy/types.js';
import { reorderByIndex } from '../stages/reorder.js';
import type { ToolCall } from '../toolCall.js';
import type { ToolError } from '../toolError.js';
import type { ToolResult } from '../toolResult.js';
import type { ApprovalTokens, TokenClaims } from './approvalTokens.js';
import { argsHash } from './canonical.js';
import { DurableTurnError } from './errors.js';
import { JournalWriter } from './journalWriter.js';
import { ProgramJournal } from './programJournal.js';
import { foldTurn, type JournaledCall } from './turnState.js';
import type { JournaledResult, JournalStore, PendingApproval } from './types.js';

/** A pipeline's durability settings, resolved from its options. */
export interface DurableSettings {
  readonly store: JournalStore;
  readonly tokens: ApprovalTokens;
  readonly approvalTtlMs: number;
  readonly leaseMs: number;
}

/** An answer given to a resume, its token checked: what it answers, and how. */
export interface GivenAnswer {
  readonly answer: 'allowed-once' | 'rejected';
  readonly claims: TokenClaims;
  readonly token: string;
}

/**
 * What a resume brings: the turn's journal, folded, and the answers given, by call index — those for
 * sub-calls of a program by its call's index (its program matches them to its sub-calls).
 */
export interface ResumePlan {
  readonly journaled: ReadonlyMap<number, JournaledCall>;
  readonly answers: ReadonlyMap<number, GivenAnswer>;
  readonly programAnswers: ReadonlyMap<number, readonly GivenAnswer[]>;
  /** How many entries the journal held when it was read: more once the lease is taken means stale. */
  readonly entries: number;
}

/**
 * Where a batch of a program's sub-calls is journaled (see `ProgramJournal`): under the program's own
 * key, each sub-call at the slot it was bound to; its approvals name the program's call in the turn,
 * and the turn's journal learns when one is answered.
 */
export interface SubBatchScope {
  /** The key the sub-calls are journaled under. */
  readonly key: string;
  /** The slot (journal index) of the sub-call the program made `position`-th. */
  slotOf(position: number): number;
  /** The index of the program's call in the turn. */
  readonly callIndex: number;
  /** A sub-call's approval (`token`) was answered with `answer`: the turn's journal records it. */
  answered(token: string, answer: 'allowed-once' | 'rejected'): void;
}

/**
 * One durable batch: a run (or a resume) of one turn. It holds the turn's lease while it runs, and
 * journals every call's life through one writer, from taps between the stages — the stages know
 * nothing of it:
 * - after intake: `received` (index, id, name, the arguments as sent) — or, resuming, the journaled
 *   outcome of calls that finished (replayed, never run again) and `outcome_unknown` for calls that
 *   started and never finished, unless their tool is `idempotent`;
 * - after pre-execute: `decided` (decision, admitted arguments, trace), and a start check that writes
 *   `started` and waits until it is durable, so no body runs unrecorded;
 * - the guard's approvals: `approval_pending` with a signed token when the approver suspends a call,
 *   `approval_answered` when it is answered;
 * - the results: `finished`, durable before the result is given out.
 * Resuming, the journaled decision is folded in as the innermost policy (today's policies can only
 * tighten it), and suspended calls are answered by the answers given (a consumed token, once).
 *
 * A program's call (`run_code`) gets a journal for its sub-calls (`ProgramJournal`), and is run again
 * on resume — its sub-calls that finished are answered from that journal, not run. Its sub-calls are a
 * batch of this class too, under a `SubBatchScope`, with a plan that grows as the program makes them.
 */
export class DurableBatch {
  readonly #owner = randomUUID();
  readonly #writer: JournalWriter;
  #renewal: NodeJS.Timeout | undefined;
  #closed: Promise<void> = Promise.resolve();
  /** The subscription ended: what its programs' sub-calls still do is not journaled (see `ProgramCall.ended`). */
  #ended = false;

  constructor(
    private readonly settings: PipelineSettings,
    private readonly durable: DurableSettings,
    private readonly turn: string,
    private readonly plan?: ResumePlan,
    private readonly scope?: SubBatchScope,
  ) {
    this.#writer = scope === undefined ? new JournalWriter(durable.store, turn) : new JournalWriter(durable.store, scope.key, (position) => scope.slotOf(position));
  }

  /**
   * Takes the turn's lease (and, for a first run, checks that the turn is new), then keeps renewing it.
   * @throws {DurableTurnError} `turn_leased` or `turn_exists`.
   */
  private async open(): Promise<void> {
    const { store, leaseMs } = this.durable;
    if (!(await store.lease(this.turn, this.#owner, leaseMs))) {
      throw new DurableTurnError('turn_leased', `Turn ${JSON.stringify(this.turn)} is being driven by another process (its lease is live); try again once it ends.`);
    }
    if (this.plan === undefined && (await store.read(this.turn)).length > 0) {
      await store.release(this.turn, this.#owner);
      throw new DurableTurnError('turn_exists', `Turn ${JSON.stringify(this.turn)} has run already: resume it (pipeline.resume) instead of running it again.`);
    }
    // A resume was planned before its lease: another process may have driven the turn in between.
    if (this.plan !== undefined && (await store.read(this.turn)).length !== this.plan.entries) {
      await store.release(this.turn, this.#owner);
      throw new DurableTurnError('turn_leased', `Turn ${JSON.stringify(this.turn)} was driven by another process while this resume was being planned; resume it again.`);
    }
    this.#renewal = setInterval(() => void Promise.resolve().then(() => store.lease(this.turn, this.#owner, leaseMs)).catch(() => undefined), Math.max(1, Math.floor(leaseMs / 3)));
    this.#renewal.unref();
  }

  /** Gives the lease up at once, so another request can resume the turn right after. */
  private async close(): Promise<void> {
    clearInterval(this.#renewal);
    try {
      await this.durable.store.release(this.turn, this.#owner);
    } catch {
      // A store that fails now (closed, broken) cannot give the lease up: it lapses after leaseMs. The
      // run's own outcome — or its journal_failed error — is what the caller must hear, not this.
    }
  }

  /**
   * The batch as an operator, for one subscription: it takes the lease (calls that arrive meanwhile
   * wait, none is lost), runs the journaled stages with results in model order, and gives the lease up
   * when the subscription ends — `closed` then resolves.
   */
  operator(signal: AbortSignal | undefined, taps: StageTaps = {}): OperatorFunction<ToolCall, ToolResult> {
    return (calls) =>
      defer(() => {
        const opened = this.open();
        return calls.pipe(
          holdUntil(opened),
          this.stages(signal, taps),
          reorderByIndex(),
          finalize(() => {
            this.#ended = true;
            this.#closed = opened.then(() => this.close(), () => undefined);
          }),
        );
      });
  }

  /**
   * The journaled stages alone, results in completion order, without the lease: a program's sub-calls
   * (their program's call holds the turn's lease).
   */
  stages(signal: AbortSignal | undefined, taps: StageTaps = {}): OperatorFunction<ToolCall, ToolResult> {
    return runStages(this.#settings(), signal, composeTaps(this.#taps(), taps));
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
      pre: [...settings.pre, this.#journaledDecision(plan)],
      preNames: [...settings.preNames, '(journal)'],
      approve: this.#answers(plan),
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
        if (isDurableProgram(record.tool)) attachProgramJournal(record, this.#programJournal(record));
        attachDurableCall(record, { turn: this.turn, index: record.index, resumed: this.plan?.journaled.get(record.index)?.started === true });
        // The last check before the body: `started` is durable before it is invoked.
        record.addStartCheck({
          policy: '(journal)',
          check: async () => {
            writer.write({ kind: 'started', index: record.index, at: at() });
            await this.#durable();
            return undefined;
          },
        });
      }),
      admitted: tap((record) => {
        if (record.decision !== 'ask' || this.plan?.answers.has(record.index) === true) return; // answers journal themselves
        if (record.status === undefined) writer.write({ kind: 'approval_answered', index: record.index, answer: 'allowed-once', at: at() });
        else if (record.error?.code === 'approval_rejected') writer.write({ kind: 'approval_answered', index: record.index, answer: 'rejected', at: at() });
      }),
      finished: awaitEach((result) => {
        if (result.status !== 'suspended' && !(this.plan?.journaled.get(result.index)?.finished !== undefined)) {
          writer.write({ kind: 'finished', index: result.index, result: journaledResult(result), at: at() });
        }
        return this.#durable();
      }),
    };
  }

  /** Everything written is durable; a store failure becomes a `journal_failed` error. */
  async #durable(): Promise<void> {
    try {
      await this.#writer.durable();
    } catch (error) {
      throw new DurableTurnError('journal_failed', `The journal of turn ${JSON.stringify(this.turn)} could not be written: ${describeError(error)}`, { cause: error });
    }
  }

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
    });
  }

  /**
   * Resuming: a call that finished is replayed; one that started and never finished is not run again —
   * unless its tool is idempotent, a program (it runs again, its sub-calls answered from its journal), or
   * re-attaching (its body finds the job it started before).
   */
  #restore(record: CallRecord, call: JournaledCall): void {
    if (call.finished !== undefined) return replay(record, call.finished);
    if (call.started && record.tool?.idempotent !== true && !runsAgain(record.tool)) {
      record.fail('error', {
        code: 'outcome_unknown',
        message: `Tool "${record.name}" was started by a process that stopped before it finished; it may or may not have taken effect, and it is not run again (it is not idempotent).`,
      });
    }
  }

  /**
   * Whether the call's body was started by some process (the journal says so): an approval whose nonce
   * is consumed but whose call never started was used by a process that stopped before the body — the
   * approval still admits that one run. (While a lease is live no other process drives the turn.)
   */
  async #startedBefore(index: number): Promise<boolean> {
    return foldTurn(await this.durable.store.read(this.turn)).get(index)?.started ?? false;
  }

  /** The decision journaled before, folded in last: today's policies can tighten it, never relax it. */
  #journaledDecision(plan: ResumePlan): PrePolicy {
    return function journaled(ctx) {
      const call = plan.journaled.get(ctx.index);
      if (call?.decision === undefined) return undefined;
      const reasons = call.pending?.reasons ?? [];
      return { decision: call.decision, reason: reasons.length > 0 ? reasons.join('; ') : 'as decided before the turn was resumed' };
    };
  }

  /**
   * Resuming, the approver: a call with an answer given is answered by it — for the same arguments,
   * once (the token's nonce is consumed in the store); a call still waiting stays suspended; any other
   * `ask` goes to the pipeline's approver.
   */
  #answers(plan: ResumePlan): Approver {
    const { approve } = this.settings;
    const { store } = this.durable;
    return async (request, signal) => {
      const given = plan.answers.get(request.index);
      if (given !== undefined) {
        if (argsHash(request.args) !== given.claims.argsHash) throw new Error('the approval was given for other arguments; it must be asked again');
        if (!(await store.consume(this.turn, given.claims.nonce)) && (await this.#startedBefore(request.index))) {
          throw new Error('the approval was already used');
        }
        this.#writer.write({ kind: 'approval_answered', index: request.index, answer: given.answer, at: Date.now() });
        this.scope?.answered(given.token, given.answer);
        return given.answer;
      }
      const call = plan.journaled.get(request.index);
      // An answer journaled before admits the call it was given for, without asking again: one whose
      // body never started (its process stopped in between), a program running again, or a body that
      // re-attaches to the job it started.
      if (call?.answered !== undefined && (!call.started || runsAgain(request.tool))) return call.answered;
      if (call?.pending !== undefined) return 'suspend';
      if (approve === undefined) throw new Error('no approver is configured');
      return approve(request, signal);
    };
  }
}

/** A started call of this tool runs again on resume without repeating its effect. */
function runsAgain(tool: CallRecord['tool']): boolean {
  return isDurableProgram(tool) || isReattaching(tool);
}

/** A value as JSON data for the journal; one without a JSON form (a transform's BigInt) is noted as such. */
function asData(value: unknown): unknown {
  try {
    return snapshotValue(value);
  } catch {
    return { unserializable: describeValue(value) };
  }
}

/** A finished result as the journal keeps it: what the model saw, serialisable. */
function journaledResult(result: ToolResult): JournaledResult {
  const status = result.status as JournaledResult['status'];
  const base = { status, content: result.content, started: result.started };
  if (result.status === 'ok') {
    const ok = result.streamed ? { ...base, streamed: true } : base;
    try {
      return JSON.stringify(result.value) === undefined ? { ...ok, valueOmitted: result.value !== undefined } : { ...ok, value: result.value };
    } catch {
      return { ...ok, valueOmitted: true };
    }
  }
  return { ...base, error: errorOf(result.error) };
}

/** An error's JSON form without its `cause` (what a body threw is not data). */
function errorOf(error: ToolError): { readonly code: ToolError['code']; readonly message: string } {
  const { cause: _cause, ...rest } = error as ToolError & { cause?: unknown };
  try {
    return JSON.parse(JSON.stringify(rest)) as { code: ToolError['code']; message: string };
  } catch {
    return { code: error.code, message: error.message };
  }
}

/** A call's journaled outcome, as its result: the same model-facing fields, and it never runs. */
function replay(record: CallRecord, result: JournaledResult): void {
  record.replayed = true;
  record.started = result.started;
  record.content = result.content;
  if (result.status === 'ok') record.succeed(result.value, result.streamed === true);
  else record.fail(result.status, result.error as ToolError);
}
