import type { OperatorFunction } from 'rxjs';
import { describeError } from '../util/describe.js';
import type { MaybeLater } from '../util/later.js';
import type { ProgramJournal as ProgramJournalHandle, ProgramRunJournal } from './durableProgram.js';
import type { BatchOptions } from '../engine/pool/batchOptions.js';
import type { SubBatch } from '../engine/pipelineHandle.js';
import type { PipelineSettings } from '../engine/settings.js';
import type { JournalStore } from '../types/journal.js';
import type { PendingApproval } from '../types/pendingApproval.js';
import type { ToolCall } from '../types/toolCall.js';
import type { ToolResult } from '../types/toolResult.js';
import { argsHash } from './canonical.js';
import { DurableTurnError } from './errors.js';
import type { JournalWriter } from './journalWriter.js';
import type { LeaseKeeper } from './leaseKeeper.js';
import type { DurableSettings, GivenAnswer, ResumePlan, SubBatchScope } from './settings.js';
import { foldTurn, type JournaledCall } from './turnState.js';

/** What the turn's batch knows of the call of a program. */
export interface ProgramCall {
  readonly durable: DurableSettings;
  readonly turn: string;
  readonly index: number;
  readonly id: string;
  /** It started before (so its sub-calls may have a journal). */
  readonly ranBefore: boolean;
  /** The answers given to this resume for its sub-calls' approvals. */
  readonly answers: readonly GivenAnswer[];
  /** The turn's journal of its sub-calls' approvals answered before (consumed), by token. */
  readonly answered: ReadonlyMap<string, 'allowed-once' | 'rejected'>;
  /** The turn's writer, and its flush (`journal_failed` when the store fails). */
  readonly writer: JournalWriter;
  readonly flush: () => MaybeLater<void>;
  /**
   * The turn's batch ended (its results were dropped, or it finished): its program's sub-calls write
   * nothing more, as a stopped process would not — so a resume finds a sub-call that was running as
   * started and never finished, exactly like a call of the turn, instead of reading its cancellation.
   */
  readonly ended: () => boolean;
  /** The turn's lease: the sub-calls' writes are fenced by it. */
  readonly lease: LeaseKeeper;
  /**
   * The stages of a batch of the program's sub-calls, journaled under `scope`, in a pool run by
   * `options` (a `DurableBatch`'s `stages`). Given by the turn's batch, which makes this journal: so
   * this module does not import the class that imports it.
   */
  readonly subBatch: (settings: PipelineSettings, options: BatchOptions, durable: DurableSettings, plan: ResumePlan, scope: SubBatchScope, signal: AbortSignal) => OperatorFunction<ToolCall, ToolResult>;
}

/** The key the sub-calls of the program of call `callId` in `turn` are journaled under. */
export function programKey(turn: string, callId: string): string {
  return `${turn}\u0000${callId}`;
}

/**
 * The journal of one program's sub-calls in a durable turn, for every run of the program: its first,
 * and one per resume, each running it from the start.
 *
 * Sub-calls are journaled like a turn's calls (`received` → `decided` → approvals → `started` →
 * `finished`), under the program's own key, each at a *slot*: the journal index of one sub-call across
 * runs. A slot's *position* is where it was opened: the program's `n`-th call (from 0) in the run that
 * made the call it was opened for, as its journaled id `<call id>#<n + 1>` says. When the program
 * makes a call (in the order it makes them), it is bound to the first of:
 * 1. the earliest slot not yet bound in this run with the same tool name and arguments hash (the
 *    arguments as the program sent them);
 * 2. when the tool is not `idempotent`: the slot not yet bound in this run, of the same tool, at this
 *    call's position, whose body started — the last opened, if there are several;
 * 3. a new slot, at this call's position.
 * A program that runs as before makes the same calls in the same order, so its `n`-th call is bound to
 * the slot of its `n`-th call of the run before; one that reorders or diverges still finds every slot
 * it calls again with the same arguments, each once. Rule 2 is for a program that puts the clock or a
 * random value in a call's arguments: there the call is the one whose body started, whatever its
 * arguments now, and it must not run twice — it is answered from its slot, though its arguments
 * differ (the slot's result, or `outcome_unknown`). An idempotent tool's call with other arguments
 * gets a new slot, and runs.
 *
 * A slot keeps its position for good: a later run that binds it elsewhere by its arguments (rule 1),
 * or leaves it unbound because it called another tool there (that call opens a slot of its own at the
 * same position), does not move it; so every later call of its tool at its position finds it (while no
 * call binds it by its arguments first). What the journal cannot tell: a slot opened at one position
 * whose body started in a later run at another (bound there by its arguments) is found by rule 2 at
 * the position it was opened at only; and a program whose calls shift (it makes more or fewer calls
 * before them) finds started slots by their arguments only. A slot whose id names no position of this
 * program (none that toolstream wrote) is bound by rule 1 only.
 *
 * The sub-call then goes through the pipeline's stages as a call of a resumed turn does: a slot that
 * finished is replayed (the program sees the same value or error text, and nothing runs); one that
 * started and never finished is `outcome_unknown` unless its tool is idempotent; one that waits for an
 * approval is answered by the answer given for its token (consumed once, for the same arguments) or
 * suspended again with the same token; today's policies can only tighten its journaled decision.
 * Slots never move, so nothing that finished runs twice, however often and however differently the
 * program runs again.
 */
export class ProgramJournal implements ProgramJournalHandle {
  constructor(private readonly call: ProgramCall) {}

  /** Opens the next run: reads the slots the runs before journaled. @throws {DurableTurnError} `journal_failed`. */
  async open(): Promise<ProgramRun> {
    const { durable, turn, id, ranBefore } = this.call;
    const key = programKey(turn, id);
    if (!ranBefore) return new ProgramRun(this.call, key, new Map());
    try {
      return new ProgramRun(this.call, key, foldTurn(await durable.store.read(key)));
    } catch (error) {
      throw new DurableTurnError('journal_failed', `The journal of the program of call ${JSON.stringify(id)} in turn ${JSON.stringify(turn)} could not be read: ${describeError(error)}`, { cause: error });
    }
  }
}

/** One run of a program: binds its calls to slots, and journals them as a sub-batch. */
export class ProgramRun implements ProgramRunJournal {
  /** Slots by name and arguments hash, in slot order (rule 1); those bound in this run are skipped. */
  readonly #byArgs = new Map<string, JournaledCall[]>();
  /** Slots whose body started, by position and name, in slot order (rule 2); those bound in this run are skipped. */
  readonly #started = new Map<string, JournaledCall[]>();
  /** The slots bound in this run. */
  readonly #bound = new Set<number>();
  /** The next slot no run has used. */
  #fresh: number;
  /** The tools the program's calls go to (set by `stages`, before any call is placed): which are idempotent. */
  #tools: PipelineSettings['tools'] | undefined;
  /** By position in this run: its slot, and what the journal says of it (bound slots only). */
  readonly #slots = new Map<number, number>();
  readonly #journaled = new Map<number, JournaledCall>();
  /** By position: the answer given for its slot's pending approval. */
  readonly #answers = new Map<number, GivenAnswer>();

  constructor(
    private readonly call: ProgramCall,
    private readonly key: string,
    slots: ReadonlyMap<number, JournaledCall>,
  ) {
    const ordered = [...slots.values()].sort((a, b) => a.index - b.index);
    for (const slot of ordered) {
      const match = matchKey(slot.name, slot.args);
      if (match !== undefined) append(this.#byArgs, match, slot);
      const position = slot.started ? openedAt(slot.id, call.id) : undefined;
      if (position !== undefined) append(this.#started, positionKey(position, slot.name), slot);
    }
    this.#fresh = ordered.length === 0 ? 0 : ordered[ordered.length - 1]!.index + 1;
  }

  place(position: number, name: string, args: unknown): void {
    const slot = this.#sameArgs(name, args) ?? this.#startedHere(position, name);
    if (slot === undefined) {
      this.#slots.set(position, this.#fresh++);
      return;
    }
    this.#bound.add(slot.index);
    this.#slots.set(position, slot.index);
    const token = slot.pending?.token;
    // The turn's journal may know an answer its slot lost (its process stopped between the two writes).
    const answered = slot.answered ?? (token === undefined ? undefined : this.call.answered.get(token));
    this.#journaled.set(position, answered === slot.answered ? slot : { ...slot, answered });
    const waiting = token !== undefined && answered === undefined && slot.finished === undefined;
    const given = waiting ? this.call.answers.find((answer) => answer.token === token) : undefined;
    if (given !== undefined) this.#answers.set(position, given);
  }

  /** The sub-batch's stages, run by the turn's journal: the batch gives its settings and pool options to the journal's runner. */
  stages(batch: SubBatch, signal: AbortSignal): OperatorFunction<ToolCall, ToolResult> {
    return batch.stages(signal, (settings, options, signal) => this.#subBatch(settings, options, signal));
  }

  #subBatch(settings: PipelineSettings, options: BatchOptions, signal: AbortSignal): OperatorFunction<ToolCall, ToolResult> {
    const { durable, index, writer } = this.call;
    this.#tools = settings.tools;
    const scope: SubBatchScope = {
      key: this.key,
      // Every call is placed before it is dispatched; a position never placed would get a slot of its own.
      slotOf: (position) => this.#slots.get(position) ?? this.#bindFresh(position),
      callIndex: index,
      answered: (token, answer) => writer.write({ kind: 'approval_answered', index, answer, token, at: Date.now() }),
      lease: this.call.lease,
    };
    // A sub-batch takes no lease (its program's call holds the turn's), so `entries` is never compared.
    const plan: ResumePlan = { journaled: this.#journaled, answers: this.#answers, programAnswers: new Map(), entries: 0 };
    return this.call.subBatch(settings, options, { ...durable, store: untilEnded(durable.store, this.call.ended) }, plan, scope, signal);
  }

  async suspended(approvals: readonly PendingApproval[]): Promise<void> {
    const { writer, index, flush } = this.call;
    for (const approval of approvals) writer.write({ kind: 'approval_pending', index, approval, at: Date.now() });
    await flush();
  }

  /** Rule 1: the earliest slot not bound in this run with the same tool and arguments. */
  #sameArgs(name: string, args: unknown): JournaledCall | undefined {
    const match = matchKey(name, args);
    const slots = match === undefined ? undefined : this.#byArgs.get(match);
    while (slots !== undefined && slots.length > 0 && this.#bound.has(slots[0]!.index)) slots.shift();
    return slots?.shift();
  }

  /**
   * Rule 2: a non-idempotent tool's slot, at this position, whose body started (the last opened). A tool
   * the program cannot reach is taken as not idempotent, as a resumed turn takes it.
   */
  #startedHere(position: number, name: string): JournaledCall | undefined {
    if (this.#tools?.get(name)?.idempotent === true) return undefined;
    const slots = this.#started.get(positionKey(position, name));
    while (slots !== undefined && slots.length > 0 && this.#bound.has(slots[slots.length - 1]!.index)) slots.pop();
    return slots?.pop();
  }

  #bindFresh(position: number): number {
    const slot = this.#fresh++;
    this.#slots.set(position, slot);
    return slot;
  }
}

/** The store, failing every call once `ended()`: nothing more reaches the journal (no body starts, as none can be recorded). */
function untilEnded(store: JournalStore, ended: () => boolean): JournalStore {
  const alive = () => {
    if (ended()) throw new Error('the turn\'s batch has ended; its program writes nothing more');
  };
  return {
    append: (key, entries, lease) => (alive(), store.append(key, entries, lease)),
    read: (key) => (alive(), store.read(key)),
    acquire: (turn, owner, ms) => (alive(), store.acquire(turn, owner, ms)),
    renew: (lease, ms) => (alive(), store.renew(lease, ms)),
    release: (lease) => (alive(), store.release(lease)),
    consume: (turn, nonce) => (alive(), store.consume(turn, nonce)),
    prune: (options) => (alive(), store.prune(options)),
  };
}

/** Adds `slot` to the list under `key`. */
function append(lists: Map<string, JournaledCall[]>, key: string, slot: JournaledCall): void {
  const list = lists.get(key);
  if (list === undefined) lists.set(key, [slot]);
  else list.push(slot);
}

/** The position a slot was opened at: `n - 1` for the sub-call id `<call id>#<n>`; none for an id of another form. */
function openedAt(slotId: string, callId: string): number | undefined {
  const n = slotId.startsWith(`${callId}#`) ? slotId.slice(callId.length + 1) : '';
  return /^[1-9]\d{0,14}$/.test(n) ? Number(n) - 1 : undefined;
}

/** What rule 2 finds a slot by: the position it was opened at and its tool. */
function positionKey(position: number, name: string): string {
  return `${position}\u0000${name}`;
}

/** What binds a call to a slot: its tool and the hash of its arguments as sent (none without a JSON form). */
function matchKey(name: string, args: unknown): string | undefined {
  try {
    return `${name}\u0000${argsHash(args)}`;
  } catch {
    return undefined;
  }
}
