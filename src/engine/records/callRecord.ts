import type { AnyTool } from '../../types/tool.js';
import { describeAbortReason, quote } from '../../util/describe.js';
import type { BodyRun } from '../pool/bodyRun.js';
import type { RunHooks } from '../chains/hooks.js';
import type { StartCheckEntry } from '../chains/startChecks.js';
import type { Decision, TraceEntry } from '../../types/decision.js';
import type { CancelReason, ToolError } from '../../types/toolError.js';
import type { ResultStatus } from '../../types/toolResult.js';
import type { CallView } from '../../types/callView.js';
import type { CallKey, CallSlots } from '../../types/slots.js';
import type { ReceivedVerdict } from '../../types/hooks.js';
import { ATTEMPT } from './callSlots.js';
import { wallNow } from '../../stream/clock.js';

/** Why and by whom the rest of a subscription was cancelled. */
export interface Cancellation {
  readonly reason: CancelReason;
  /**
   * The call that failed or asked (a cancelled turn remembers only its id and name); undefined when
   * the run's signal aborted.
   */
  readonly by: { readonly id: string; readonly name: string } | undefined;
  /** For `'aborted'`: what the run's signal said (see `describeAbortReason`), if anything. */
  readonly abortReason?: string;
}

const ABORTED: Cancellation = Object.freeze({ reason: 'aborted', by: undefined });

/** The cancellation of a run whose signal aborted with `reason`. */
export function runAborted(reason: unknown): Cancellation {
  const abortReason = describeAbortReason(reason);
  return abortReason === undefined ? ABORTED : Object.freeze({ reason: 'aborted', by: undefined, abortReason });
}

/** What the signals of the work a cancellation stops abort with: the policy stages' (policies, start checks) and bodies'. */
export function cancelledAbort({ reason, abortReason }: Cancellation): DOMException {
  return new DOMException(`cancelled (${reason}${abortReason === undefined ? '' : `: ${abortReason}`})`, 'AbortError');
}

/**
 * The mutable state of one call as it moves through the stages. Internal: the result stage turns it
 * into a frozen `ToolResult`. Every field is initialised in the constructor so all records share one
 * hidden class. Layers see it as a {@link CallView}.
 */
export class CallRecord implements CallView, CallSlots {
  /** The tool, once intake found it. */
  tool: AnyTool | undefined = undefined;
  /** The call's turn (`call.turn`); `undefined` for the subscription's anonymous turn. */
  turn: string | undefined = undefined;
  /** The effective arguments: raw, then parsed JSON, then the schema's output. */
  args: unknown;
  /** Set once, when the outcome is decided; a record with a status is finished. */
  status: ResultStatus | undefined = undefined;
  value: unknown = undefined;
  /** The value is the array of items of an Observable or AsyncIterable body. */
  streamed = false;
  error: ToolError | undefined = undefined;
  /** Items a streamed body produced before it failed. */
  partial: readonly unknown[] | undefined = undefined;
  /** The body was invoked. */
  started = false;
  /** Bodies invoked so far: more than 1 when the tool's `retry` ran it again. */
  attempts = 0;
  /**
   * The kind of the verdict a layer settled the call with at `received` (see `ReceivedVerdict`), if any:
   * a `replay`ed outcome passes post-execute and the result chain as it is; an `in-place` call waits for
   * its turn in the pool and fails there (rule 7a).
   */
  verdict: ReceivedVerdict['kind'] | undefined = undefined;
  admittedAt = 0;
  /** The guard let the call through (allowed or approved), or 0. */
  decidedAt = 0;
  startedAt = 0;
  endedAt = 0;
  /** Milliseconds spent waiting for the tool's `limit` permit and `rateLimit` token (see `LimitWaits`). */
  limitWaitMs = 0;
  /** Milliseconds spent in post-execute. */
  postMs = 0;

  /** The folded pre-execute decision; undefined until pre-execute ran (or intake failed). */
  decision: Decision | undefined = undefined;
  /** The model-facing text once post-execute rendered it (the result stage renders it otherwise). */
  content: string | undefined = undefined;
  /**
   * State only some calls need (policies, budgets), allocated on first write: a batch of plain calls
   * keeps small records, which measurably matters when 100k of them wait in the pool's queue.
   */
  private extras: CallExtras | undefined = undefined;

  /** The running body's state, from start until it settles. */
  run: BodyRun | undefined = undefined;

  /** The run's hooks (set when it received the call), which the stages call at each moment; undefined if no layer has any. */
  hooks: RunHooks | undefined = undefined;

  constructor(
    readonly index: number,
    readonly id: string,
    readonly name: string,
    /** The arguments as sent: the JSON text, or — once intake read them — the snapshot of an object. */
    public rawArgs: unknown,
    readonly receivedAt: number,
    /**
     * The pipeline's clock (`IntakeSettings.clock`), which every time of this call is read from: the
     * stages and the pool read `record.clock()`, so the result stage needs no settings for `timing`.
     */
    readonly clock: () => number = wallNow,
  ) {
    this.args = rawArgs;
  }

  private get writable(): CallExtras {
    return (this.extras ??= new CallExtras());
  }
  /** The arguments in the schema's input form (parsed JSON, then rewrites); set by pre-execute. */
  get input(): unknown {
    return this.extras?.input;
  }
  set input(value: unknown) {
    this.writable.input = value;
  }
  /** The validated arguments before any policy rewrote them. */
  get originalArgs(): unknown {
    return this.extras?.originalArgs;
  }
  set originalArgs(value: unknown) {
    this.writable.originalArgs = value;
  }
  /** The policy whose decision set the final level. */
  get decidedBy(): string {
    return this.extras?.decidedBy ?? '(default)';
  }
  set decidedBy(value: string) {
    this.writable.decidedBy = value;
  }
  /** The reasons given at the final level. */
  get reasons(): readonly string[] {
    return this.extras?.reasons ?? NO_REASONS;
  }
  set reasons(value: readonly string[]) {
    this.writable.reasons = value;
  }
  /** Policies that rewrote the arguments, in order. */
  get rewrittenBy(): string[] | undefined {
    return this.extras?.rewrittenBy;
  }
  set rewrittenBy(value: string[] | undefined) {
    this.writable.rewrittenBy = value;
  }
  get trace(): TraceEntry[] | undefined {
    return this.extras?.trace;
  }
  get meta(): Record<string, unknown> | undefined {
    return this.extras?.meta;
  }
  set meta(value: Record<string, unknown> | undefined) {
    this.writable.meta = value;
  }
  /** What retention dropped. */
  get omitted(): Omitted | undefined {
    return this.extras?.omitted;
  }
  set omitted(value: Omitted | undefined) {
    this.writable.omitted = value;
  }

  /** Checks to repeat immediately before the body starts (`ctx.beforeStart`), in registration order. */
  get startChecks(): readonly StartCheckEntry[] | undefined {
    return this.extras?.startChecks;
  }

  addStartCheck(entry: StartCheckEntry): void {
    (this.writable.startChecks ??= []).push(entry);
  }

  addTrace(entry: TraceEntry): void {
    (this.writable.trace ??= []).push(entry);
  }

  /** The call's slots: state layers keep with it (see `CallKey`). The record itself, typed narrower. */
  get slots(): CallSlots {
    return this;
  }

  /** The value a layer set under `key` for this call (`CallSlots`). */
  get<T>(key: CallKey<T>): T | undefined {
    return this.extras?.slots?.get(key.id) as T | undefined;
  }

  /** Keeps `value` under `key` for this call (`CallSlots`): one `Map` for all keys, made by the first set. */
  set<T>(key: CallKey<T>, value: T): void {
    if (key.id === ATTEMPT.id) throw new TypeError(`${ATTEMPT.name} is answered by the engine; it cannot be set.`);
    (this.writable.slots ??= new Map()).set(key.id, value);
  }

  succeed(value: unknown, streamed: boolean): void {
    this.status = 'ok';
    this.value = value;
    this.streamed = streamed;
  }

  fail(status: Exclude<ResultStatus, 'ok'>, error: ToolError, partial?: readonly unknown[]): void {
    this.status = status;
    this.error = error;
    this.partial = partial;
  }

  /**
   * Applies a layer's verdict at `received` (see `ReceivedVerdict`): the call's outcome, settled before
   * any policy sees it. An `in-place` call keeps going to the pool, which fails it at its turn (rule 7a).
   */
  settle(verdict: ReceivedVerdict): void {
    this.verdict = verdict.kind;
    if (verdict.kind === 'replay') {
      const { result } = verdict;
      this.started = result.started;
      this.content = result.content;
      if (result.status === 'ok') this.succeed(result.value, result.streamed === true);
      else this.fail(result.status, result.error as ToolError);
    } else if (verdict.kind === 'in-place') {
      this.failUnknown(verdict.outcome); // as a body's `outcome.unknown`
    } else {
      this.fail('suspended', verdict.error);
    }
  }

  /** The call's effect may or may not have happened (`outcome.unknown`): an `outcome_unknown` error. */
  failUnknown(outcome: { readonly message: string }): void {
    this.fail('error', { code: 'outcome_unknown', message: `Tool "${this.name}": ${outcome.message}` });
  }

  cancel(cancellation: Cancellation): void {
    const { reason, by, abortReason } = cancellation;
    const cause =
      reason === 'aborted'
        ? `the run was aborted${abortReason === undefined ? '' : ` (${abortReason})`}`
        : reason === 'response_failed'
          ? "the model's response failed before it ended, and this tool starts only after a complete response"
          : reason === 'sibling_failed'
          ? `call ${quote(by?.id ?? '')} (${by?.name}) failed`
          : `call ${quote(by?.id ?? '')} (${by?.name}) cancelled the remaining calls`;
    const message = this.started
      ? `Cancelled while running: ${cause}.`
      : `Not run: ${cause}. The call itself was not at fault; retry it if it is still needed.`;
    this.fail('cancelled', {
      code: 'cancelled',
      message,
      reason,
      ...(by ? { byCallId: by.id } : {}),
      ...(abortReason === undefined ? {} : { abortReason }),
      started: this.started,
    });
  }

}

type Omitted = { items: number; characters: number; lines: number };
const NO_REASONS: readonly string[] = Object.freeze([]);

/** See `CallRecord.extras`. */
class CallExtras {
  input: unknown = undefined;
  originalArgs: unknown = undefined;
  decidedBy = '(default)';
  reasons: readonly string[] = NO_REASONS;
  rewrittenBy: string[] | undefined = undefined;
  trace: TraceEntry[] | undefined = undefined;
  meta: Record<string, unknown> | undefined = undefined;
  omitted: Omitted | undefined = undefined;
  startChecks: StartCheckEntry[] | undefined = undefined;
  /** `CallRecord.set`: slot values by their key's registered symbol. */
  slots: Map<symbol, unknown> | undefined = undefined;
}
