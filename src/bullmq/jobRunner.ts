import { UnrecoverableError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { isObservable, observable as observableSymbol, type ObservableInput } from 'rxjs';
import { safeParse } from 'zod/v4/core';
import type { AnyTool, ToolContext } from '../defineTool.js';
import { describeError } from '../internal/describe.js';
import { formatIssues } from '../internal/formatIssues.js';
import { deepFreeze } from '../internal/snapshot.js';
import type { CancelNotices } from './cancelNotices.js';
import type { FleetKeys } from './fleetKeys.js';
import { refusal, type JobPayload } from './jobPayload.js';
import { ProgressSender } from './remoteProgress.js';
import { failureReason, type WorkerFailureCode } from './remoteToolError.js';
import { streamItems } from './streamItems.js';

/** What a completed job returns: the body's value (`v`), or how many items it streamed (`s`). */
export type JobReturn = ({ readonly k: 'v'; readonly value: unknown } | { readonly k: 's'; readonly n: number }) & {
  /** How many progress reports the body sent (absent: none), so the agent reads them only when there are some. */
  readonly p?: number;
};

/** How many item writes of one stream may be unanswered at once. */
const WRITES_IN_FLIGHT = 64;

/** Runs one job's body on a worker (`createToolWorker`); a failure is thrown with a `[code] text` reason the agent reads back. */
export class JobRunner {
  constructor(
    private readonly tools: ReadonlyMap<string, AnyTool>,
    private readonly keys: FleetKeys,
    private readonly secret: Buffer,
    private readonly notices: CancelNotices,
    private readonly commands: Redis,
  ) {}

  async process(job: Job, jobSignal: AbortSignal | undefined): Promise<JobReturn> {
    const jobId = job.id!;
    const why = refusal(this.secret, job.data, { jobId, prefix: this.keys.prefix, queue: this.keys.queue });
    if (why !== undefined) refuse('refused', `Job ${jobId} refused by the worker: ${why}. Nothing ran.`);
    const payload = job.data as JobPayload;
    const tool = this.tools.get(payload.tool);
    if (tool === undefined) {
      refuse('unknown_tool', `No tool "${payload.tool}" on the workers of queue "${this.keys.queue}" (they have: ${[...this.tools.keys()].join(', ') || 'none'}).`);
    }
    if (job.attemptsStarted > 1 && !tool.idempotent) {
      refuse('outcome_unknown', 'the worker running it stopped before it finished, and it is not idempotent, so it was not run again; it may or may not have taken effect.');
    }
    const { deadline } = payload;
    if (deadline !== null && Date.now() >= deadline) refuse('timeout', 'its deadline passed before a worker could start it; it did not run.');
    let parsed: ReturnType<typeof safeParse>;
    try {
      parsed = safeParse(tool.input, payload.args);
    } catch (error) {
      refuse('invalid_args', `The input schema of tool "${tool.name}" failed on the worker: ${describeError(error)}`);
    }
    if (!parsed.success) {
      refuse('invalid_args', `Invalid arguments for tool "${tool.name}" (checked on the worker):\n${formatIssues(parsed.error.issues)}`);
    }
    // Checked after BullMQ registered the job's signal: a cancel heard from now on aborts it.
    if (jobSignal?.aborted === true || (await this.notices.cancelled(jobId, job.attemptsStarted > 1))) {
      refuse('cancelled', 'the call was cancelled before its body started; it did not run.');
    }
    const body = new BodySignal(jobSignal, deadline);
    const done = this.notices.running(jobId);
    // The body's progress travels to the agent's ctx.progress (and so to its events); every report is in
    // Redis before the job ends, so the agent's last read finds it.
    const progress = new ProgressSender(this.commands, this.keys.progress(jobId), this.keys.itemsChannel, jobId, payload.keepMs);
    try {
      const ctx: ToolContext = { signal: body.signal, callId: payload.callId, index: payload.index, turn: payload.turn ?? undefined, idempotencyKey: payload.key, cancelRest: () => undefined, progress: progress.report };
      const output: unknown = tool.execute(deepFreeze(parsed.data), ctx);
      const outcome: JobReturn = isStreamOutput(output) ? { k: 's', n: await this.#stream(jobId, output, payload.keepMs, body.signal) } : { k: 'v', value: await output };
      await progress.flushed();
      return progress.sent === 0 ? outcome : { ...outcome, p: progress.sent };
    } catch (error) {
      await progress.flushed();
      const code: WorkerFailureCode = body.signal.aborted ? (body.timedOut ? 'timeout' : 'cancelled') : 'tool_failed';
      throw new Error(failureReason(code, describeError(error)));
    } finally {
      done();
      body.dispose();
    }
  }

  /** Writes each item to the job's stream as it comes, and tells the agents; one connection keeps them in order. */
  #stream(jobId: string, output: AsyncIterable<unknown> | ObservableInput<unknown>, keepMs: number, signal: AbortSignal): Promise<number> {
    const key = this.keys.items(jobId);
    const write = (item: unknown) =>
      this.commands.multi().xadd(key, '*', 'v', JSON.stringify(item) ?? 'null').pexpire(key, keepMs).publish(this.keys.itemsChannel, jobId).exec();
    return streamItems(output, write, WRITES_IN_FLIGHT, signal);
  }
}

function refuse(code: WorkerFailureCode, text: string): never {
  throw new UnrecoverableError(failureReason(code, text));
}

function isStreamOutput(output: unknown): output is AsyncIterable<unknown> | ObservableInput<unknown> {
  if ((typeof output !== 'object' || output === null) && typeof output !== 'function') return false;
  if (typeof (output as PromiseLike<unknown>).then === 'function') return false;
  return (
    isObservable(output) ||
    typeof (output as Record<symbol, unknown>)[observableSymbol as symbol] === 'function' ||
    typeof (output as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function'
  );
}

/** The body's signal: aborted with the job's (the agent cancelled) or at the job's deadline. */
class BodySignal {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #onAbort = () => this.#controller.abort(new DOMException('the call was cancelled', 'AbortError'));
  timedOut = false;

  constructor(
    private readonly job: AbortSignal | undefined,
    deadline: number | null,
  ) {
    if (job?.aborted === true) this.#onAbort();
    else job?.addEventListener('abort', this.#onAbort, { once: true });
    if (deadline !== null) {
      this.#timer = setTimeout(() => {
        this.timedOut = !this.#controller.signal.aborted;
        this.#controller.abort(new DOMException('the job\'s deadline passed', 'TimeoutError'));
      }, Math.max(0, deadline - Date.now()));
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.job?.removeEventListener('abort', this.#onAbort);
  }
}
