import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { CodeRunRequest, CodeRunResult } from '../types.js';
import { ABORTED_MESSAGE, StopReason, timeoutMessage, type FromWorker, type HostError, type ToWorker, type WorkerResult, type WorkerSetup } from './protocol.js';

/** How long a run that was told to stop may take to answer before its worker is terminated. */
const STOP_GRACE_MS = 200;
/** The same for a run whose worker has not started it yet (still booting, or preparing an interpreter). */
const BOOT_GRACE_MS = 5_000;

/** A run handed to a worker, and where its result goes. */
export interface Job {
  readonly request: CodeRunRequest;
  readonly timeoutMs: number;
  readonly resolve: (result: CodeRunResult) => void;
}

interface ActiveRun {
  readonly runId: number;
  readonly job: Job;
  /** Aborts when the run ends: host functions still running see it. */
  readonly hostCalls: AbortController;
  readonly onAbort: () => void;
  /** The worker started the program: its time limit runs. */
  started: boolean;
  /** Why the run was told to stop, once it was. */
  halted: StopReason | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * One worker thread and the run it holds. The worker is the judge of how a run ended; the main thread
 * only asks it to stop (the shared stop slot, which its interrupt handler reads, and a `stop` message
 * for a run waiting on host calls), and terminates it when it does not answer in time, or when it died.
 */
export class WorkerSlot {
  private readonly worker: Worker;
  private readonly stopSlot: Int32Array;
  private active: ActiveRun | undefined;
  private nextRunId = 0;
  /** False once the worker exited or was terminated; the pool then replaces it. */
  alive = true;

  constructor(
    /** The worker's script, evaluated as CommonJS (nothing is loaded by path, so a bundled app works). */
    code: string,
    setup: Omit<WorkerSetup, 'stop'>,
    resourceLimits: ResourceLimits | undefined,
    private readonly onIdle: (slot: WorkerSlot) => void,
  ) {
    const stop = new SharedArrayBuffer(4);
    this.stopSlot = new Int32Array(stop);
    const workerData: WorkerSetup = { ...setup, stop };
    // No inherited flags: the host's (`--input-type`, loaders) are not the worker's business.
    const options = { workerData, resourceLimits, execArgv: [] };
    this.worker = new Worker(code, { ...options, eval: true });
    this.worker.unref();
    this.worker.on('message', (message: FromWorker) => this.receive(message));
    this.worker.on('error', (error) => this.died(diedOf(error)));
    this.worker.on('exit', (exitCode) => this.died(`(it exited with code ${exitCode}).`));
  }

  get busy(): boolean {
    return this.active !== undefined;
  }

  start(job: Job): void {
    const runId = ++this.nextRunId;
    const { request, timeoutMs } = job;
    Atomics.store(this.stopSlot, 0, StopReason.none);
    const active: ActiveRun = {
      runId,
      job,
      hostCalls: new AbortController(),
      onAbort: () => this.halt(StopReason.abort),
      started: false,
      halted: undefined,
      timer: undefined, // armed when the worker starts the program
    };
    this.active = active;
    request.signal?.addEventListener('abort', active.onAbort, { once: true });
    this.worker.ref();
    const bindings = request.bindings.map(({ global, functions }) => ({ global, functions: Object.keys(functions) }));
    this.post({ type: 'run', runId, program: request.program, bindings, timeoutMs });
    if (request.signal?.aborted === true) this.halt(StopReason.abort);
  }

  /** Stops the run it holds as cancelled (used when the runtime closes). */
  abort(): void {
    this.halt(StopReason.abort);
  }

  /** Ends the worker; a run it holds ends as cancelled. */
  async terminate(): Promise<void> {
    this.alive = false;
    this.end({ logs: [], failure: { kind: 'abort', message: 'The runtime was closed.' } });
    await this.worker.terminate();
  }

  private receive(message: FromWorker): void {
    const { active } = this;
    if (active === undefined || message.runId !== active.runId) return;
    if (message.type === 'done') this.end(fromWorker(message.result));
    else if (message.type === 'started') this.started(active);
    else this.callHost(active, message).catch(() => undefined); // it answers every failure itself
  }

  private async callHost(active: ActiveRun, message: Extract<FromWorker, { type: 'call' }>): Promise<void> {
    const { callId } = message;
    let answer: ToWorker;
    try {
      const binding = active.job.request.bindings.find(({ global }) => global === message.global);
      const fn = binding !== undefined && Object.hasOwn(binding.functions, message.name) ? binding.functions[message.name] : undefined;
      if (typeof fn !== 'function') throw new TypeError(`${message.global}.${message.name} is not a function`);
      const value: unknown = await fn(JSON.parse(message.json), active.hostCalls.signal);
      const json = JSON.stringify(value);
      answer = { type: 'settle', runId: active.runId, callId, json };
    } catch (error) {
      answer = { type: 'fail', runId: active.runId, callId, error: toHostError(error) };
    }
    if (this.active === active) this.post(answer);
  }

  /** The worker started the program: its time limit runs from now (or its stop grace, if it was told to stop). */
  private started(active: ActiveRun): void {
    active.started = true;
    if (active.halted !== undefined) this.armGrace(active, STOP_GRACE_MS);
    else active.timer = setTimeout(() => this.halt(StopReason.timeout), active.job.timeoutMs);
  }

  /** Asks the worker to stop the run; terminates it if it does not answer within the grace period. */
  private halt(reason: StopReason): void {
    const { active } = this;
    if (active === undefined || Atomics.compareExchange(this.stopSlot, 0, StopReason.none, reason) !== StopReason.none) return;
    active.halted = reason;
    this.post({ type: 'stop', runId: active.runId });
    this.armGrace(active, active.started ? STOP_GRACE_MS : BOOT_GRACE_MS);
  }

  private armGrace(active: ActiveRun, graceMs: number): void {
    clearTimeout(active.timer);
    active.timer = setTimeout(() => {
      const timedOut = active.halted === StopReason.timeout;
      const message = timedOut ? timeoutMessage(active.job.timeoutMs) : ABORTED_MESSAGE;
      // What it printed is lost with the worker.
      this.alive = false;
      this.end({ logs: [], failure: { kind: timedOut ? 'timeout' : 'abort', message } });
      void this.worker.terminate();
    }, graceMs);
  }

  private died(why: string): void {
    if (!this.alive) return;
    this.alive = false;
    this.end({ logs: [], failure: { kind: 'worker-exit', message: `The program's worker thread stopped ${why} A fresh worker runs the next program.` } });
  }

  private end(result: CodeRunResult): void {
    const { active } = this;
    if (active === undefined) return;
    this.active = undefined;
    clearTimeout(active.timer);
    active.job.request.signal?.removeEventListener('abort', active.onAbort);
    active.hostCalls.abort();
    this.worker.unref();
    active.job.resolve(result);
    this.onIdle(this);
  }

  private post(message: ToWorker): void {
    this.worker.postMessage(message);
  }
}

/**
 * Why a worker failed. Only Node's own out-of-memory termination is blamed on the program; anything else
 * (a worker script that failed to load, say) is reported as it is, never as a memory problem.
 */
function diedOf(error: Error): string {
  const { code } = error as { code?: unknown };
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') return `(${error.message}): the program made it hold too much host memory (console output, tool calls, its value).`;
  return `(it failed: ${error.name}: ${error.message}).`;
}

/** The worker checked the value's JSON (QuickJS's own `JSON.stringify`); it is parsed here. */
function fromWorker({ json, ...result }: WorkerResult): CodeRunResult {
  if (json === undefined) return result;
  try {
    return { ...result, value: JSON.parse(json) };
  } catch (error) {
    return { logs: result.logs, failure: { kind: 'invalid-output', message: `The program's return value cannot be sent back: ${String(error)}.` } };
  }
}

/** What a host function threw, as plain strings; never throws, whatever was thrown (getters, null prototypes). */
function toHostError(error: unknown): HostError {
  try {
    if (error instanceof Error) {
      const { code } = error as { code?: unknown };
      return { name: String(error.name), message: String(error.message), code: typeof code === 'string' ? code : undefined };
    }
    return { name: 'Error', message: String(error), code: undefined };
  } catch {
    return { name: 'Error', message: 'The host function failed with a value that cannot be described.', code: undefined };
  }
}
