import type { JsonValue } from '../../types/json.js';
import type { ToolContext } from '../../types/tool.js';
import type { BodyRun } from './bodyRun.js';
import type { CallRecord } from '../records/callRecord.js';
import { PROGRAM_JOURNAL, programJournalOfRecord, type ProgramJournal } from '../layerState/durableProgram.js';
import { idempotencyKeyOf } from './idempotencyKey.js';
import { ATTEMPT, DURABLE_CALL, durableCallOfRecord, type DurableCall } from '../layerState/reattach.js';

/** What the context needs from the pool. */
export interface CancelRestTarget {
  cancelRest(reason: 'cancel_requested', by: CallRecord): void;
  /** The subscription's random id, drawn on first use (the idempotency key of a call without a turn). */
  subscriptionId(): string;
}

/**
 * The `ctx` a body receives. Its state is private (`#`), so a body cannot reach the pool or the record
 * through it.
 */
export class ExecutionContext implements ToolContext {
  readonly #pool: CancelRestTarget;
  readonly #record: CallRecord;
  /** The attempt this context was made for: a retry gets a new context, with a fresh signal. */
  readonly #run: BodyRun;

  constructor(pool: CancelRestTarget, record: CallRecord) {
    this.#pool = pool;
    this.#record = record;
    this.#run = record.run!;
  }

  get signal(): AbortSignal {
    return this.#run.signal();
  }

  get callId(): string {
    return this.#record.id;
  }

  get index(): number {
    return this.#record.index;
  }

  get turn(): string | undefined {
    return this.#record.turn;
  }

  get idempotencyKey(): string {
    return idempotencyKeyOf(this.#record, () => this.#pool.subscriptionId());
  }

  /** Which attempt of the body this is, 1 for the first (read by a remote tool's body, to name its job). */
  get [ATTEMPT](): number {
    return this.#record.attempts;
  }

  /** The journal of a program's sub-calls, in a durable turn (read by `run_code`'s body, nobody else). */
  get [PROGRAM_JOURNAL](): ProgramJournal | undefined {
    return programJournalOfRecord(this.#record);
  }

  /** Where the call stands in its durable turn (read by a remote tool's body, to name its job). */
  get [DURABLE_CALL](): DurableCall | undefined {
    return durableCallOfRecord(this.#record);
  }

  progress(value: JsonValue): void {
    const record = this.#record;
    record.hooks?.progress(record, value);
  }

  cancelRest(): void {
    // Once its result is decided (settled, timed out, cancelled) the call is over: it no longer speaks
    // for the batch, even while its body winds down.
    const record = this.#record;
    if (record.status === undefined && !this.#run.done && record.run === this.#run) this.#pool.cancelRest('cancel_requested', record);
  }
}
