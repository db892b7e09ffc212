import { retainText } from '../util/textRetainer.js';
import type { Decision } from '../types/decision.js';
import type { ToolErrorCode } from '../types/toolError.js';
import type { ResultStatus, ToolResult } from '../types/toolResult.js';

/**
 * One tool call a program made, as logged for reconstruction (the program saw its value, or its error
 * as a `ToolCallError`).
 *
 * @example
 * ```ts
 * for (const sub of output.subCalls) console.log(sub.name, sub.status, sub.decision, `${sub.durationMs} ms`);
 * ```
 */
export interface SubDispatch {
  /** `<outer call id>#<n>`, n counting from 1 in the order the program made its calls. */
  readonly id: string;
  readonly name: string;
  /**
   * The arguments it ran with (after policy rewrites), or as sent when it never got that far;
   * `undefined` when the log's character budget had no room left for them (or they have no JSON form).
   */
  readonly args: unknown;
  /** The length of the arguments as JSON, whether the log kept them or not (0 without a JSON form). */
  readonly argsChars: number;
  /** The folded pre-execute decision; absent when the call never reached the policies. */
  readonly decision: Decision | undefined;
  readonly status: ResultStatus;
  /**
   * Why it failed, when it did: the pipeline's own error (the program, like the model, saw the result's
   * content). A message past the log's character budget is cut at the end, with a note of what went.
   */
  readonly error: { readonly code: ToolErrorCode; readonly message: string } | undefined;
  /** What the output budget dropped from what the program received, when it dropped anything. */
  readonly omitted: ToolResult['omitted'];
  /** From the call entering the pipeline to its result. */
  readonly durationMs: number;
}

/**
 * What a program's sub-call log left out, as exact counts (zero when it holds everything).
 *
 * @example
 * ```ts
 * const { subCalls, subCallsOmitted } = result.value as ProgramOutput;
 * if (subCallsOmitted.entries > 0) console.warn(`${subCallsOmitted.entries} more sub-calls were not logged`);
 * ```
 */
export interface SubCallsOmitted {
  /** Sub-calls the log holds no entry for: those the program made past `maxLoggedSubCalls`. */
  readonly entries: number;
  /**
   * Characters of arguments (as JSON) and error messages the log does not hold: of entries without
   * their `args`, of messages it cut, and of the calls it holds no entry for.
   */
  readonly characters: number;
}

/** A program's log as it ended: its entries, in call order, and what it left out. */
export interface LoggedSubCalls {
  readonly entries: readonly SubDispatch[];
  readonly omitted: SubCallsOmitted;
}

/** The bounds of one program's log: `runCodeTool`'s `maxLoggedSubCalls` and `maxLoggedChars`. */
export interface SubCallLogLimits {
  readonly maxEntries: number;
  readonly maxChars: number;
}

/**
 * The sub-call log of one program, bounded so that a program cannot make the host hold more than it
 * allows: entries for the first `maxEntries` calls (in the order the program made them), and at most
 * `maxChars` characters of arguments and error messages, spent in the order the calls finished.
 * Arguments are kept whole or not at all; a message is cut. Everything left out is counted exactly.
 */
export class SubCallLog {
  private readonly entries: SubDispatch[] = [];
  /** Characters of the budget still free. */
  private room: number;
  private omittedEntries = 0;
  private omittedChars = 0;

  constructor(private readonly limits: SubCallLogLimits) {
    this.room = limits.maxChars;
  }

  /** Logs the call the program made `position`-th (from 0). */
  add(position: number, call: Omit<SubDispatch, 'argsChars'>): void {
    const argsChars = jsonLength(call.args);
    const { error } = call;
    if (position >= this.limits.maxEntries) {
      this.omittedEntries++;
      this.omittedChars += (argsChars ?? 0) + (error?.message.length ?? 0);
      return;
    }
    let { args } = call;
    if (argsChars === undefined || argsChars > this.room) {
      args = undefined;
      this.omittedChars += argsChars ?? 0;
    } else {
      this.room -= argsChars;
    }
    this.entries[position] = { ...call, args, argsChars: argsChars ?? 0, error: error === undefined ? undefined : this.keptError(error) };
  }

  /** The entries, in call order, and what was left out. */
  contents(): LoggedSubCalls {
    return { entries: this.entries, omitted: { entries: this.omittedEntries, characters: this.omittedChars } };
  }

  private keptError(error: NonNullable<SubDispatch['error']>): NonNullable<SubDispatch['error']> {
    const { message } = error;
    if (message.length <= this.room) {
      this.room -= message.length;
      return error;
    }
    const room = this.room;
    this.room = 0;
    if (room === 0) {
      this.omittedChars += message.length;
      return { code: error.code, message: `[... ${message.length} character${message.length === 1 ? '' : 's'} omitted]` };
    }
    const kept = retainText(message, { maxChars: room });
    this.omittedChars += kept.omittedChars;
    return { code: error.code, message: kept.text };
  }
}

/** The length of `value` as JSON; undefined when it has none (a rewrite may produce anything). */
function jsonLength(value: unknown): number | undefined {
  try {
    return JSON.stringify(value)?.length;
  } catch {
    return undefined;
  }
}
