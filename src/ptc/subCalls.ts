import { Subject, type Subscription } from 'rxjs';
import type { ProgramRunJournal } from '../durable/durableProgram.js';
import { renderValue } from '../util/renderContent.js';
import type { SubBatch } from '../engine/pipelineHandle.js';
import type { PendingApproval } from '../types/pendingApproval.js';
import type { ToolErrorCode } from '../types/toolError.js';
import type { ToolResult } from '../types/toolResult.js';
import { SubCallLog, type LoggedSubCalls, type SubCallLogLimits } from './subCallLog.js';
import type { HostFunction } from './types.js';
import type { ShowPaths } from './workspacePaths.js';

/** What a failed sub-call rejects with; inside the program it is a `ToolCallError` with this code. */
class SubCallError extends Error {
  override readonly name = 'ToolCallError';
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
  }
}

interface Waiting {
  /** Where the call's entry goes in the log: the order the program made its calls in. */
  readonly position: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** A program in a durable turn: its run's journal, and what to do when it can only wait for approvals. */
export interface DurableSubCalls {
  readonly journal: ProgramRunJournal;
  /** See `CodeRuntime.settleMs`. */
  readonly settleMs: number;
  /** No sub-call is in flight but suspended ones, and none was made for `settleMs`: stop the program. */
  readonly onStuck: () => void;
}

/**
 * The sub-calls of one program run, as one run of the program's sub-batch `batch` (the pipeline's own
 * stages: restriction, validation, policies, guard, approval, execute, post-execute, result; see
 * `SubBatch`), without reordering: each call's promise settles as soon as its result is built.
 * `close()` cancels what is still unfinished, waits for every body to wind down, and returns the log.
 *
 * A program learns no more than the model would from a direct call: it receives the result's value when
 * the model would see exactly that value's plain rendering, and otherwise the text the model would see
 * (a tool's `render`, a post-execute policy that replaced the content, a budget that cut it). A failed
 * call, whatever its status, rejects with the result's code and, as its message, that same text. Both
 * pass through `show` (`runCodeTool({ workspace })`: host paths made relative); the log keeps them as they were.
 *
 * In a durable turn (`durable`) the batch is journaled under the program's call, each call bound to
 * what earlier runs of the program journaled of it before it is dispatched. A suspended call (its
 * approval waits for a human) never settles in the program — it must not go on as if the call had
 * failed — and once only suspended calls are left in flight, `onStuck` tells the body to stop it.
 */
export class SubCalls {
  private readonly calls = new Subject<{ readonly id: string; readonly name: string; readonly args: unknown }>();
  private readonly stop = new AbortController();
  private readonly waiting = new Map<string, Waiting>();
  private readonly log: SubCallLog;
  private readonly subscription: Subscription;
  private readonly drained: Promise<void>;
  private count = 0;
  /** Suspended calls, by id: their promises stay pending. */
  private readonly suspended = new Map<string, { readonly position: number; readonly approval: PendingApproval | undefined }>();
  private settleTimer: NodeJS.Timeout | undefined = undefined;
  constructor(
    batch: SubBatch,
    /** The tools that start only after the model's response: a program cannot call them. */
    private readonly afterResponse: ReadonlySet<string>,
    private readonly parentId: string,
    parentSignal: AbortSignal,
    limits: SubCallLogLimits,
    private readonly durable?: DurableSubCalls,
    /** What the program is shown of a value or a message (see `workspacePaths`). */
    private readonly show: ShowPaths = (value) => value,
  ) {
    this.log = new SubCallLog(limits);
    const onAbort = () => this.stop.abort(parentSignal.reason);
    parentSignal.addEventListener('abort', onAbort, { once: true });
    if (parentSignal.aborted) onAbort();
    let drain!: () => void;
    this.drained = new Promise<void>((resolve) => (drain = resolve));
    const stages = durable === undefined ? batch.stages(this.stop.signal) : durable.journal.stages(batch, this.stop.signal);
    this.subscription = this.calls.pipe(stages).subscribe({
      next: (result) => {
        this.settle(result);
        this.watchProgress();
      },
      error: () => drain(), // the Subject never fails; kept so a bug cannot leave close() waiting
      complete: () => {
        parentSignal.removeEventListener('abort', onAbort);
        drain();
      },
    });
  }

  /** The host function behind `tools.<name>` in the program. */
  functionFor(name: string): HostFunction {
    const afterResponse = this.afterResponse.has(name);
    return (args) =>
      new Promise((resolve, reject) => {
        const position = this.count++;
        const id = `${this.parentId}#${position + 1}`;
        const answer = (status: 'cancelled' | 'denied', code: 'cancelled' | 'restricted', message: string) => {
          this.log.add(position, { id, name, args, decision: undefined, status, error: { code, message }, omitted: undefined, durationMs: 0 });
          reject(new SubCallError(code, message));
        };
        // The batch no longer takes calls in (the program ended or was cancelled): answered here.
        if (this.stop.signal.aborted) return answer('cancelled', 'cancelled', 'Not run: the program was cancelled or had ended.');
        if (afterResponse) return answer('denied', 'restricted', afterResponseRefusal(name));
        this.waiting.set(id, { position, resolve, reject });
        this.durable?.journal.place(position, name, args);
        this.calls.next({ id, name, args });
      });
  }

  /**
   * Cancels the unfinished sub-calls (they still get results), waits until every body settled or was
   * abandoned after `abortGraceMs`, and resolves to the log, in call order, with what it left out.
   */
  async close(): Promise<LoggedSubCalls> {
    clearTimeout(this.settleTimer);
    this.stop.abort();
    this.calls.complete();
    await this.drained;
    this.subscription.unsubscribe();
    return this.log.contents();
  }

  /** The approvals of the suspended calls, in the order the program made them. */
  approvals(): PendingApproval[] {
    return [...this.suspended.values()]
      .sort((a, b) => a.position - b.position)
      .flatMap(({ approval }) => (approval === undefined ? [] : [approval]));
  }

  /**
   * Durable turns: when only suspended calls are in flight, waits `settleMs`; if the program made no
   * call meanwhile, it cannot progress without an approval: `onStuck`.
   */
  private watchProgress(): void {
    if (this.durable === undefined || this.suspended.size === 0 || this.waiting.size > 0) return;
    clearTimeout(this.settleTimer);
    const made = this.count;
    const { onStuck, settleMs } = this.durable;
    this.settleTimer = setTimeout(() => {
      if (this.count === made && this.waiting.size === 0) onStuck();
    }, settleMs);
  }

  private settle(result: ToolResult): void {
    const waiting = this.waiting.get(result.id);
    if (waiting === undefined) return;
    this.waiting.delete(result.id);
    this.log.add(waiting.position, {
      id: result.id,
      name: result.name,
      args: result.args,
      decision: result.decision,
      status: result.status,
      error: result.error === undefined ? undefined : { code: result.error.code, message: result.error.message },
      omitted: result.omitted,
      durationMs: result.timing.durations.total,
    });
    if (result.status === 'suspended') {
      const approval = result.error.code === 'approval_pending' ? result.error.approval : undefined;
      this.suspended.set(result.id, { position: waiting.position, approval });
      return; // its promise stays pending
    }
    if (result.status === 'ok') waiting.resolve(this.show(isPlainRendering(result) ? result.value : result.content));
    // The model's text, not `error.message`: post-execute policies and budgets may have rewritten or cut it.
    else waiting.reject(new SubCallError(result.error.code, this.show(result.content)));
  }
}

/**
 * Why a program's call of an `after-response` tool is refused. Such a tool starts only once the model's
 * response has ended, and a program runs inside that response (its own call is part of it): waiting
 * for the end from inside would wait for the program's own end, which never comes. Refusing at once
 * keeps the tool's promise — no effect starts on a half-streamed response — and tells the model what
 * to do instead.
 */
function afterResponseRefusal(name: string): string {
  return `Not run: "${name}" starts only after the model's response has ended (start: 'after-response'), and a program runs inside that response, so it cannot call it. Return what it needs from the program and call it directly, as a tool call of its own.`;
}

/**
 * Whether the model would see just the value's own rendering, so handing the value over shows nothing
 * more. (A streamed item without a JSON form renders as a placeholder, and would not cross as itself.)
 */
function isPlainRendering(result: ToolResult & { status: 'ok' }): boolean {
  try {
    if (result.content !== renderValue(result.value, result.streamed)) return false;
    return !result.streamed || (result.value as readonly unknown[]).every((item) => typeof item === 'string' || JSON.stringify(item) !== undefined);
  } catch {
    return false;
  }
}
