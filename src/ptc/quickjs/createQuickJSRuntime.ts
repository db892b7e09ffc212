import { promisify } from 'node:util';
import type { ResourceLimits } from 'node:worker_threads';
import { brotliDecompress } from 'node:zlib';
import { ConfigError } from '../../util/errors.js';
import { isCount, isPositiveDuration, MAX_TIMER_MS } from '../../util/validate.js';
import type { CodeRunRequest, CodeRunResult, CodeRuntime } from '../types.js';
import { checkRequest } from './checkRequest.js';
import payload from './payload.js';
import { WorkerSlot, type Job } from './workerSlot.js';

/**
 * Options of {@link createQuickJSRuntime}.
 *
 * @example
 * ```ts
 * const options: QuickJSRuntimeOptions = { timeoutMs: 10_000, memoryLimitBytes: 128 * 2 ** 20, poolSize: 4 };
 * ```
 */
export interface QuickJSRuntimeOptions {
  /** Wall-clock limit of one run, from its start in a worker (tool calls included). @default 30_000 */
  readonly timeoutMs?: number;
  /**
   * The interpreter's whole memory (heap, stack, and strings and buffers of every kind) for one run,
   * enforced by the size of its WebAssembly memory. 32 MiB to 2 GiB. @default 64 MiB
   */
  readonly memoryLimitBytes?: number;
  /** Characters of console output per run; past it the program is stopped (`'output-limit'`). @default 20_000 */
  readonly maxLogChars?: number;
  /** Characters of the returned value's JSON; a longer one is an `'output-limit'` failure. @default 1_000_000 */
  readonly maxValueChars?: number;
  /**
   * Characters of one tool call's arguments as JSON. A longer call rejects inside the program
   * (`ToolCallError`, code `args_too_large`) before its text leaves the interpreter's memory.
   * @default 1_000_000
   */
  readonly maxArgsChars?: number;
  /**
   * Characters of arguments (as JSON) of the tool calls one run has pending at once, at least
   * `maxArgsChars`. A call that would pass it rejects at once (code `pending_args_too_large`); the
   * characters of a call count until its answer reaches the program.
   * @default 10_000_000, or `maxArgsChars` when that is larger
   */
  readonly maxPendingArgsChars?: number;
  /** Worker threads, each running one program at a time; more runs wait in order. @default 2 */
  readonly poolSize?: number;
  /**
   * Limits of each worker's own V8 heap (the host side of a run: messages, strings being copied out).
   * A worker that exhausts it is replaced and its run ends as `'worker-exit'`; but keep the heap well
   * above `maxValueChars` and the console line size: Node aborts the whole process, not just the worker,
   * when one allocation is larger than the heap can ever hold (nodejs/node#47224).
   * @default Node's defaults
   */
  readonly resourceLimits?: ResourceLimits;
}

const MiB = 2 ** 20;

/**
 * A {@link CodeRuntime} that runs each program in QuickJS compiled to WebAssembly, on a pool of worker
 * threads. A program reaches nothing of the host but its bindings: no `process`, `require`, timers,
 * network or file system; only JSON crosses. Each run gets a fresh interpreter with its own fixed-size
 * memory (so a memory bomb fails inside the limit), a time limit enforced by an interrupt handler (so
 * `while (true) {}` ends), and the worker is terminated and replaced when a run does not stop in time.
 * TypeScript is accepted: types are stripped, and error positions refer to the program as written.
 * What a program sends the host is bounded before it is copied out of the interpreter: a call's
 * arguments (`maxArgsChars`, code `args_too_large`), the arguments of the calls pending at once
 * (`maxPendingArgsChars`, code `pending_args_too_large`), and their number (1000, code
 * `too_many_calls`) — each a `ToolCallError` inside the program, the host function never called — and
 * its console output and return value (`maxLogChars`, `maxValueChars`).
 * Idle workers do not keep the process alive; `close()` releases them. Import it from `toolstream/quickjs`.
 *
 * @throws {ConfigError} for an invalid option.
 *
 * @example
 * ```ts
 * import { createQuickJSRuntime } from 'toolstream/quickjs';
 *
 * const runtime = createQuickJSRuntime({ timeoutMs: 10_000, poolSize: 2 });
 * const result = await runtime.run({
 *   program: 'const rows: number[] = await db.query({ sql: "select 1" }); return rows.length;',
 *   bindings: [{ global: 'db', functions: { query: async ({ sql }) => pool.query(sql) } }],
 * });
 * await runtime.close();
 * ```
 */
export function createQuickJSRuntime(options: QuickJSRuntimeOptions = {}): CodeRuntime {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('createQuickJSRuntime', option, expected, received);
  };
  const {
    timeoutMs = 30_000,
    memoryLimitBytes = 64 * MiB,
    maxLogChars = 20_000,
    maxValueChars = 1_000_000,
    maxArgsChars = 1_000_000,
    maxPendingArgsChars = Math.max(10_000_000, maxArgsChars),
    poolSize = 2,
    resourceLimits,
  } = options;
  if (!isPositiveDuration(timeoutMs)) fail('timeoutMs', `1 to ${MAX_TIMER_MS} milliseconds`, timeoutMs);
  if (!Number.isInteger(memoryLimitBytes) || memoryLimitBytes < 32 * MiB || memoryLimitBytes > 2048 * MiB) {
    fail('memoryLimitBytes', 'an integer from 32 MiB to 2 GiB', memoryLimitBytes);
  }
  if (!isCount(maxLogChars, 0)) fail('maxLogChars', 'a non-negative integer or Infinity', maxLogChars);
  if (!isCount(maxValueChars, 1)) fail('maxValueChars', 'a positive integer or Infinity', maxValueChars);
  if (!isCount(maxArgsChars, 1)) fail('maxArgsChars', 'a positive integer or Infinity', maxArgsChars);
  if (!isCount(maxPendingArgsChars, maxArgsChars)) {
    fail('maxPendingArgsChars', `an integer of at least maxArgsChars (${maxArgsChars}), or Infinity`, maxPendingArgsChars);
  }
  if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 64) fail('poolSize', 'an integer from 1 to 64', poolSize);
  if (resourceLimits !== undefined && (typeof resourceLimits !== 'object' || resourceLimits === null)) {
    fail('resourceLimits', 'an object of worker resource limits', resourceLimits);
  }
  return new QuickJSPool({ timeoutMs, memoryLimitBytes, maxLogChars, maxValueChars, maxArgsChars, maxPendingArgsChars, poolSize, resourceLimits });
}

type Settings = Required<Omit<QuickJSRuntimeOptions, 'resourceLimits'>> & { readonly resourceLimits: ResourceLimits | undefined };

class QuickJSPool implements CodeRuntime {
  readonly language = 'typescript';
  readonly isolation = 'quickjs-wasm-worker';
  private readonly slots: WorkerSlot[] = [];
  private readonly queue: Job[] = [];
  private readonly inFlight = new Set<Promise<CodeRunResult>>();
  private closed = false;
  /** Workers being started (QuickJS's wasm still compiling); close() waits for them. */
  private readonly spawns = new Set<Promise<void>>();

  constructor(private readonly settings: Settings) {}

  run(request: CodeRunRequest): Promise<CodeRunResult> {
    checkRequest(request);
    if (this.closed) return Promise.resolve(aborted('The runtime is closed.'));
    if (request.signal?.aborted === true) return Promise.resolve(aborted('The program was cancelled before it started.'));
    const result = new Promise<CodeRunResult>((resolve) => {
      const withdraw = (): void => this.withdraw(job);
      // The listener goes with the run: a signal shared by many runs must not collect one per run.
      const settle = (outcome: CodeRunResult): void => {
        request.signal?.removeEventListener('abort', withdraw);
        resolve(outcome);
      };
      const job: Job = { request, timeoutMs: this.settings.timeoutMs, resolve: settle };
      this.queue.push(job);
      request.signal?.addEventListener('abort', withdraw, { once: true });
      this.pump();
    });
    this.inFlight.add(result);
    void result.then(() => this.inFlight.delete(result));
    return result;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve(aborted('The runtime was closed before the program started.'));
    for (const slot of this.slots) slot.abort();
    await Promise.all(this.inFlight);
    await Promise.all(this.spawns); // they see `closed` and start nothing
    await Promise.all(this.slots.splice(0).map((slot) => slot.terminate()));
  }

  /** A queued job whose signal aborted leaves the queue at once. */
  private withdraw(job: Job): void {
    const at = this.queue.indexOf(job);
    if (at === -1) return;
    this.queue.splice(at, 1);
    job.resolve(aborted('The program was cancelled before it started.'));
  }

  /** Hands queued runs to idle workers, starting workers up to `poolSize` while runs wait. */
  private pump(): void {
    for (let at = this.slots.length - 1; at >= 0; at--) if (!this.slots[at]!.alive) this.slots.splice(at, 1);
    while (this.queue.length > 0 && !this.closed) {
      const slot = this.slots.find((candidate) => candidate.alive && !candidate.busy);
      if (slot === undefined) {
        const spawning = this.spawns.size;
        if (this.slots.length + spawning < this.settings.poolSize && spawning < this.queue.length) this.spawn();
        return;
      }
      slot.start(this.queue.shift()!);
    }
  }

  private spawn(): void {
    const { memoryLimitBytes, maxLogChars, maxValueChars, maxArgsChars, maxPendingArgsChars, resourceLimits } = this.settings;
    const spawn: Promise<void> = compiledQuickJS().then(
      (wasm) => {
        this.spawns.delete(spawn);
        if (this.closed) return;
        const slot = new WorkerSlot(payload.workerCode, { wasm, memoryLimitBytes, maxLogChars, maxValueChars, maxArgsChars, maxPendingArgsChars }, resourceLimits, () => this.pump());
        this.slots.push(slot);
        this.pump();
      },
      (error: unknown) => {
        this.spawns.delete(spawn);
        compiled = undefined; // try again with the next run
        const failure = { kind: 'worker-exit', message: `QuickJS could not be loaded: ${String(error)}` } as const;
        for (const job of this.queue.splice(0)) job.resolve({ logs: [], failure });
      },
    );
    this.spawns.add(spawn);
  }
}

function aborted(message: string): CodeRunResult {
  return { logs: [], failure: { kind: 'abort', message } };
}

let compiled: Promise<WebAssembly.Module> | undefined;

/** QuickJS's WebAssembly, compiled once per process and shared by every worker. */
function compiledQuickJS(): Promise<WebAssembly.Module> {
  compiled ??= Promise.resolve()
    .then(async () => {
      const { bytes, brotli } = payload.wasm();
      return brotli ? new Uint8Array(await promisify(brotliDecompress)(bytes)) : bytes;
    })
    .then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}
