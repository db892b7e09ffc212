import type { JsonValue } from '../../types/json.js';
import type { CallKey, CallSlotsView } from '../../types/slots.js';
import type { ToolContext } from '../../types/tool.js';
import { CALL_SLOTS } from '../../util/slots.js';
import type { BodyRun } from './bodyRun.js';
import type { CallRecord } from '../records/callRecord.js';
import { ATTEMPT } from '../records/callSlots.js';
import { idempotencyKeyOf } from './idempotencyKey.js';

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
    return this.#run.signal;
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

  /**
   * The call's slots, read side, for layers' reader functions (`slotsOf(ctx)`): a view, so the body
   * still cannot reach the record. Made when read; most bodies never read it.
   */
  get [CALL_SLOTS](): CallSlotsView {
    return new BodySlots(this.#record);
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

/** What a body's `ctx` shows of its call's slots: what layers set, and the engine's `ATTEMPT`. */
class BodySlots implements CallSlotsView {
  readonly #record: CallRecord;

  constructor(record: CallRecord) {
    this.#record = record;
  }

  get<T>(key: CallKey<T>): T | undefined {
    return (key.id === ATTEMPT.id ? this.#record.attempts : this.#record.get(key)) as T | undefined;
  }
}
