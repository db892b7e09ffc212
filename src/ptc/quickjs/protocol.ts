import type { CodeRunResult } from '../types.js';

/** What the worker needs once, at start. */
export interface WorkerSetup {
  /** The compiled QuickJS module, shared by every worker (a `WebAssembly.Module` is cloneable). */
  readonly wasm: WebAssembly.Module;
  /** `Int32Array` over it, slot 0: why the current run must stop ({@link StopReason}), 0 while it may go on. */
  readonly stop: SharedArrayBuffer;
  readonly memoryLimitBytes: number;
  readonly maxLogChars: number;
  readonly maxValueChars: number;
  readonly maxArgsChars: number;
  readonly maxPendingArgsChars: number;
}

/** Values of the shared stop slot. */
export const StopReason = { none: 0, timeout: 1, abort: 2 } as const;
export type StopReason = (typeof StopReason)[keyof typeof StopReason];

/** The binding names of one global; the functions themselves stay on the main thread. */
export interface BindingShape {
  readonly global: string;
  readonly functions: readonly string[];
}

/** What a program's host function call rejects with, inside the program. */
export interface HostError {
  readonly name: string;
  readonly message: string;
  readonly code: string | undefined;
}

export type ToWorker =
  /** The time limit starts when the worker starts the run, so a worker's boot is not billed to the program. */
  | { readonly type: 'run'; readonly runId: number; readonly program: string; readonly bindings: readonly BindingShape[]; readonly timeoutMs: number }
  | { readonly type: 'settle'; readonly runId: number; readonly callId: number; readonly json: string }
  | { readonly type: 'fail'; readonly runId: number; readonly callId: number; readonly error: HostError }
  /** Ends a run that is waiting on host calls (a CPU-bound one sees the stop slot instead). */
  | { readonly type: 'stop'; readonly runId: number };

export type FromWorker =
  | { readonly type: 'call'; readonly runId: number; readonly callId: number; readonly global: string; readonly name: string; readonly json: string }
  /** The worker has an interpreter ready and starts the program now: its time limit runs from here. */
  | { readonly type: 'started'; readonly runId: number }
  | { readonly type: 'done'; readonly runId: number; readonly result: WorkerResult };

/**
 * A run's result as the worker sends it: the value stays JSON text, parsed on the main thread, so that a
 * large value is not held twice in the worker's heap (where running out can abort the whole process).
 */
export interface WorkerResult extends Omit<CodeRunResult, 'value'> {
  readonly json?: string;
}

/** The failure message of a program stopped at its time limit, whichever side stopped it. */
export function timeoutMessage(timeoutMs: number): string {
  return `The program ran past its time limit of ${timeoutMs} ms and was stopped. Do less per program, or make fewer tool calls one after another.`;
}

/** The failure message of a program whose signal aborted (or whose runtime closed) before it finished. */
export const ABORTED_MESSAGE = 'The program was cancelled before it finished.';
