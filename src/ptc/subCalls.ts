import { Subject, type Subscription } from 'rxjs';
import { runStages } from '../createPipeline.js';
import { renderValue } from '../internal/renderContent.js';
import type { PipelineSettings } from '../options.js';
import type { ToolErrorCode } from '../toolError.js';
import type { ToolResult } from '../toolResult.js';
import { SubCallLog, type LoggedSubCalls, type SubCallLogLimits } from './subCallLog.js';
import type { HostFunction } from './types.js';

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

/**
 * The sub-calls of one program run, as one batch of the pipeline's own stages (restriction,
 * validation, policies, guard, approval, execute, post-execute), without reordering: each call's
 * promise settles as soon as its result is built. `close()` cancels what is still unfinished, waits
 * for every body to wind down, and returns the log.
 *
 * A program learns no more than the model would from a direct call: it receives the result's value when
 * the model would see exactly that value's plain rendering, and otherwise the text the model would see
 * (a tool's `render`, a post-execute policy that replaced the content, a budget that cut it). A failed
 * call, whatever its status, rejects with the result's code and, as its message, that same text.
 */
export class SubCalls {
  private readonly calls = new Subject<{ readonly id: string; readonly name: string; readonly args: unknown }>();
  private readonly stop = new AbortController();
  private readonly waiting = new Map<string, Waiting>();
  private readonly log: SubCallLog;
  private readonly subscription: Subscription;
  private readonly drained: Promise<void>;
  private count = 0;

  constructor(
    settings: PipelineSettings,
    private readonly parentId: string,
    parentSignal: AbortSignal,
    limits: SubCallLogLimits,
  ) {
    this.log = new SubCallLog(limits);
    const onAbort = () => this.stop.abort(parentSignal.reason);
    parentSignal.addEventListener('abort', onAbort, { once: true });
    if (parentSignal.aborted) onAbort();
    let drain!: () => void;
    this.drained = new Promise<void>((resolve) => (drain = resolve));
    const batch: PipelineSettings = { ...settings, programBatch: true };
    this.subscription = this.calls.pipe(runStages(batch, this.stop.signal)).subscribe({
      next: (result) => this.settle(result),
      error: () => drain(), // the Subject never fails; kept so a bug cannot leave close() waiting
      complete: () => {
        parentSignal.removeEventListener('abort', onAbort);
        drain();
      },
    });
  }

  /** The host function behind `tools.<name>` in the program. */
  functionFor(name: string): HostFunction {
    return (args) =>
      new Promise((resolve, reject) => {
        const position = this.count++;
        const id = `${this.parentId}#${position + 1}`;
        if (this.stop.signal.aborted) {
          // The batch no longer takes calls in (the program ended or was cancelled): answered here.
          const message = 'Not run: the program was cancelled or had ended.';
          this.log.add(position, { id, name, args, decision: undefined, status: 'cancelled', error: { code: 'cancelled', message }, omitted: undefined, durationMs: 0 });
          reject(new SubCallError('cancelled', message));
          return;
        }
        this.waiting.set(id, { position, resolve, reject });
        this.calls.next({ id, name, args });
      });
  }

  /**
   * Cancels the unfinished sub-calls (they still get results), waits until every body settled or was
   * abandoned after `abortGraceMs`, and resolves to the log, in call order, with what it left out.
   */
  async close(): Promise<LoggedSubCalls> {
    this.stop.abort();
    this.calls.complete();
    await this.drained;
    this.subscription.unsubscribe();
    return this.log.contents();
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
    if (result.status === 'ok') waiting.resolve(isPlainRendering(result) ? result.value : result.content);
    // The model's text, not `error.message`: post-execute policies and budgets may have rewritten or cut it.
    else waiting.reject(new SubCallError(result.error.code, result.content));
  }
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
