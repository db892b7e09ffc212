import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import type { RedisClient } from './fleetRedis.js';
import { isObservable, observable as observableSymbol, type ObservableInput } from 'rxjs';
import { safeParse } from 'zod/v4/core';
import { argsHash } from '../durable/canonical.js';
import { describeError } from '../util/describe.js';
import { formatIssues } from '../util/formatIssues.js';
import { deepFreeze } from '../util/snapshot.js';
import type { AnyTool, ToolContext } from '../types/tool.js';
import type { JobObserver } from '../types/traceContext.js';
import { asTraceCarrier } from '../util/traceCarrier.js';
import { watchJob } from './jobObserve.js';
import type { CancelNotices } from './cancelNotices.js';
import { RUN_RECORD_SKEW_MS, type FleetKeys } from './fleetKeys.js';
import { shapeRefusal, signatureRefusal, type JobPayload } from './jobPayload.js';
import type { HeldJob, LockWatch } from './lockWatch.js';
import { readOutcomeRecord } from './outcomeRecord.js';
import { OutcomeSigner, type JobReturn, type UnsignedReturn } from './outcomeSigner.js';
import { ProgressSender } from './remoteProgress.js';
import { failureReason, type WorkerFailureCode } from './remoteToolError.js';
import { streamItems } from './streamItems.js';

/** How many item writes of one stream may be unanswered at once. */
const WRITES_IN_FLIGHT = 64;

/**
 * Runs one job's body on a worker (`createToolWorker`). Everything it sends back is signed for the job's
 * call (`OutcomeSigner`); a failure is thrown with a signed `[code] text` reason the agent reads back.
 * The checks before a body starts, in order: the payload's version and shape (refused unsigned: it
 * names no call), its signature, the tool, a restart after a worker was lost (the outcome it recorded,
 * if its body ended; else not run again when not idempotent, nor more than `maxReruns` times), the
 * signed expiry, the arguments, a cancel, and — not idempotent — the call's run record. A job whose lock
 * lapsed while it ran (`LockWatch`) is left to the stall check, as a lost worker's: it neither completes
 * nor fails here.
 */
export class JobRunner {
  constructor(
    private readonly tools: ReadonlyMap<string, AnyTool>,
    private readonly keys: FleetKeys,
    private readonly secret: Buffer,
    private readonly notices: CancelNotices,
    private readonly commands: RedisClient,
    private readonly locks: LockWatch,
    private readonly maxReruns: number,
    /** `createToolWorker`'s `observe`: a watch around each body (a span that continues the agent's trace). */
    private readonly observe?: JobObserver,
  ) {}

  async process(job: Job, jobSignal: AbortSignal | undefined): Promise<JobReturn> {
    const held = this.locks.hold(job.id!, job.processedOn);
    let returned: JobReturn;
    try {
      returned = await this.#process(job, jobSignal, held.lapsed);
    } catch (error) {
      if (held.lapsed.aborted) {
        held.settled(undefined, 0);
        throw new WaitingError(); // BullMQ leaves the job as it is: the stall check hands it on
      }
      held.settled(error instanceof Error ? { failed: error.message } : undefined, keepMsOf(job));
      throw error;
    }
    held.settled(held.lapsed.aborted ? undefined : { returned }, keepMsOf(job));
    if (held.lapsed.aborted) throw new WaitingError();
    return returned;
  }

  async #process(job: Job, jobSignal: AbortSignal | undefined, lapsed: HeldJob['lapsed']): Promise<JobReturn> {
    const jobId = job.id!;
    const shape = shapeRefusal(job.data);
    if (shape !== undefined) throw new UnrecoverableError(failureReason('refused', `Job ${jobId} refused by the worker: ${shape}. Nothing ran.`));
    const payload = job.data as JobPayload;
    const signer = new OutcomeSigner(this.secret, { jobId, callId: payload.callId, argsHash: argsHash(payload.args) });
    const refuse: (code: WorkerFailureCode, text: string) => never = (code, text) => {
      throw new UnrecoverableError(signer.failure(code, text));
    };
    const why = signatureRefusal(this.secret, payload, { jobId, prefix: this.keys.prefix, queue: this.keys.queue });
    if (why !== undefined) refuse('refused', `Job ${jobId} refused by the worker: ${why}. Nothing ran.`);
    const tool = this.tools.get(payload.tool);
    if (tool === undefined) {
      refuse('unknown_tool', `No tool "${payload.tool}" on the workers of queue "${this.keys.queue}" (they have: ${[...this.tools.keys()].join(', ') || 'none'}).`);
    }
    if (job.attemptsStarted > 1) {
      // Its last worker was lost — or lost its lock after the body ended, and recorded how it ended.
      const recorded = readOutcomeRecord(await this.commands.get(this.keys.outcome(jobId)).catch(() => null), signer);
      if (recorded !== undefined) {
        if ('returned' in recorded) return recorded.returned;
        throw new UnrecoverableError(recorded.failed);
      }
      if (!tool.idempotent) {
        refuse('outcome_unknown', 'the worker running it stopped before it finished, and it is not idempotent, so it was not run again; it may or may not have taken effect.');
      }
      const lost = job.attemptsStarted - 1;
      if (lost > this.maxReruns) {
        const allowed = `${this.maxReruns} ${this.maxReruns === 1 ? 'run' : 'runs'} again`;
        refuse('workers_lost', `its workers were lost ${lost} times before its body ended (each died, or lost its lock on the job: cut off from Redis, or its event loop blocked for lockMs), more than the ${allowed} the workers allow (maxReruns); it was not run again.`);
      }
    }
    if (Date.now() >= payload.expiresAt) {
      refuse('timeout', `it expired before a worker could start it (at ${new Date(payload.expiresAt).toISOString()}: its deadline, or the agent's jobExpiryMs); it did not run.`);
    }
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
    if (!tool.idempotent) await this.#takeRunRecord(jobId, payload, refuse);
    if (lapsed.aborted) throw lapsed.reason; // its lock may be another worker's now: no body starts
    const body = new BodySignal(jobSignal, lapsed, payload.deadline);
    const done = this.notices.running(jobId);
    // The body's progress travels to the agent's ctx.progress (and so to its events); every report is in
    // Redis before the job ends, so the agent's last read finds it.
    const progress = new ProgressSender(this.commands, this.keys.progress(jobId), this.keys.itemsChannel, signer, payload.keepMs);
    const watch = watchJob(this.observe, { jobId, queue: this.keys.queue, tool: tool.name, callId: payload.callId, index: payload.index, turn: payload.turn ?? undefined, attempt: payload.attempt, traceContext: asTraceCarrier(payload.tc) });
    try {
      const ctx: ToolContext = { signal: body.signal, callId: payload.callId, index: payload.index, turn: payload.turn ?? undefined, idempotencyKey: payload.key, cancelRest: () => undefined, progress: progress.report };
      // The body's whole course — its call and a stream's every item — in one function, so an observer runs all of it in its context.
      const course = async (): Promise<UnsignedReturn> => {
        const output: unknown = tool.execute(deepFreeze(parsed.data), ctx);
        return isStreamOutput(output) ? { k: 's', n: await this.#stream(jobId, signer, output, payload.keepMs, body.signal) } : { k: 'v', value: await output };
      };
      const outcome = await (watch === undefined ? course() : watch.run(course));
      await progress.flushed();
      const returned = signer.returned(progress.sent === 0 ? outcome : { ...outcome, p: progress.sent }); // a value without a JSON form throws here: tool_failed
      watch?.end({ ok: true });
      return returned;
    } catch (error) {
      await progress.flushed();
      const code: WorkerFailureCode = body.signal.aborted ? (body.timedOut ? 'timeout' : 'cancelled') : 'tool_failed';
      watch?.end({ ok: false, code, message: describeError(error) });
      throw new Error(signer.failure(code, describeError(error)));
    } finally {
      done();
      body.dispose();
    }
  }

  /**
   * Records, atomically, that a body runs for the call's attempt — or refuses the job when one did. The
   * record outlives every copy of the job that could still start (they are refused once the signed expiry
   * passed), with a margin for the clocks of other workers.
   */
  async #takeRunRecord(jobId: string, payload: JobPayload, refuse: (code: WorkerFailureCode, text: string) => never): Promise<void> {
    const key = this.keys.runRecord(payload.key, payload.attempt);
    const ttl = Math.ceil(Math.max(0, payload.expiresAt - Date.now()) + RUN_RECORD_SKEW_MS);
    let taken: string | null;
    try {
      taken = await this.commands.set(key, jobId, 'PX', ttl, 'NX');
    } catch (error) {
      return refuse('refused', `the worker could not record that the call's body runs (${describeError(error)}); it did not run.`);
    }
    if (taken === 'OK') return;
    const holder = await this.commands.get(key).catch(() => null);
    refuse(
      'outcome_unknown',
      `a body already ran for this call (${holder === jobId ? 'this job ran it before' : `job ${holder ?? '(unknown)'} ran it`}), and it is not idempotent, so it was not run again; it may or may not have taken effect.`,
    );
  }

  /** Writes each item to the job's stream as it comes, signed with its sequence number, and tells the agents; one connection keeps them in order. */
  #stream(jobId: string, signer: OutcomeSigner, output: AsyncIterable<unknown> | ObservableInput<unknown>, keepMs: number, signal: AbortSignal): Promise<number> {
    const key = this.keys.items(jobId);
    let seq = 0;
    const write = (item: unknown) => {
      const text = JSON.stringify(item) ?? 'null';
      const mac = signer.entry('item', seq++, text);
      return this.commands.multi().xadd(key, '*', 'v', text, 'm', mac).pexpire(key, keepMs).publish(this.keys.itemsChannel, jobId).exec();
    };
    return streamItems(output, write, WRITES_IN_FLIGHT, signal);
  }
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

/** How long the job's outcome is kept: its payload's `keepMs` (none for a payload refused unread). */
function keepMsOf(job: Job): number {
  const keepMs = (job.data as Partial<JobPayload> | undefined)?.keepMs;
  return typeof keepMs === 'number' && keepMs > 0 ? keepMs : 0;
}

/** The body's signal: aborted with the job's (the agent cancelled), when the job's lock lapsed, or at the job's deadline. */
class BodySignal {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #onAbort = () => this.#controller.abort(new DOMException('the call was cancelled', 'AbortError'));
  readonly #onLapse = () => this.#controller.abort(this.lapsed.reason);
  timedOut = false;

  constructor(
    private readonly job: AbortSignal | undefined,
    private readonly lapsed: AbortSignal,
    deadline: number | null,
  ) {
    if (job?.aborted === true) this.#onAbort();
    else job?.addEventListener('abort', this.#onAbort, { once: true });
    if (lapsed.aborted) this.#onLapse();
    else lapsed.addEventListener('abort', this.#onLapse, { once: true });
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
    this.lapsed.removeEventListener('abort', this.#onLapse);
  }
}
