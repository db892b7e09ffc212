import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten-core';
import type { CodeFailure, CodeFailureKind } from '../types.js';
import { formatProgramError, type DescribedThrow } from './programErrors.js';
import { PRELUDE } from './prelude.js';
import { ABORTED_MESSAGE, StopReason, timeoutMessage, type BindingShape, type HostError, type WorkerResult } from './protocol.js';
import { compileProgram, PROGRAM_FILE, type CompiledProgram } from './transpile.js';

/** QuickJS's own stack limit: above about 256 KiB a deep recursion overflows the host's stack first. */
const MAX_STACK_BYTES = 192 * 1024;
/** Host calls one run may have pending at once; past it a call rejects at once (`too_many_calls`). */
export const MAX_PENDING_CALLS = 1000;

interface Disposable {
  readonly alive: boolean;
  dispose(): void;
}

/**
 * The resolving functions of a pending host call's promise, which the prelude creates. (Not
 * `context.newPromise()`: it reads its result through a typed array that a growth of the WebAssembly
 * memory during the call detaches, and the program then sees a TypeError from the host.)
 */
interface PendingCall {
  readonly resolve: QuickJSHandle;
  readonly reject: QuickJSHandle;
  /** The length of its arguments' JSON, counted against `maxPendingArgsChars` until it settles. */
  readonly argsChars: number;
}

export interface SandboxLimits {
  readonly memoryLimitBytes: number;
  readonly maxLogChars: number;
  readonly maxValueChars: number;
  readonly maxArgsChars: number;
  readonly maxPendingArgsChars: number;
}

/** What a run needs from the worker around it. */
export interface SandboxHost {
  /** Asks the main thread to call a host function; the answer comes back through `settle` or `fail`. */
  call(callId: number, global: string, name: string, json: string): void;
  /** Why the main thread wants the run stopped (the shared stop slot). */
  stopReason(): StopReason;
  done(result: WorkerResult): void;
}

/**
 * One program in a QuickJS runtime of its own (its own heap, atoms and globals), on a QuickJS module
 * whose fixed-size WebAssembly memory is the memory limit. After the run, `release()` frees the runtime;
 * when that fails (or the run broke the interpreter) the worker drops the whole module for a fresh one.
 */
export class SandboxRun {
  private readonly runtime: QuickJSRuntime;
  private readonly memory: WebAssembly.Memory;
  private readonly context: QuickJSContext;
  private readonly calls = new Map<number, PendingCall>();
  /** Every handle the run made, disposed at the end so that the module can serve the next run. */
  private readonly owned: Disposable[] = [];
  private readonly logs: string[] = [];
  private logChars = 0;
  /** Characters of argument JSON of the host calls pending now. */
  private pendingArgsChars = 0;
  private overLimit = false;
  private nextCallId = 0;
  private finished = false;
  private compiled: CompiledProgram | undefined;
  private completion: QuickJSHandle | undefined;
  private serialize: QuickJSHandle | undefined;
  private describe: QuickJSHandle | undefined;
  private readonly deadline: number;

  constructor(
    module: QuickJSWASMModule,
    private readonly limits: SandboxLimits,
    private readonly host: SandboxHost,
    /** The program's time limit, in milliseconds from now. */
    private readonly timeoutMs: number,
  ) {
    this.deadline = Date.now() + timeoutMs;
    this.memory = module.getWasmMemory();
    this.runtime = module.newRuntime();
    this.runtime.setMaxStackSize(MAX_STACK_BYTES);
    this.runtime.setInterruptHandler(() => this.stopKind() !== undefined);
    this.context = this.runtime.newContext();
  }

  start(program: string, shapes: readonly BindingShape[]): void {
    this.guarded(() => {
      [this.serialize, this.describe] = this.installPrelude(shapes);
      const compiled = compileProgram(program);
      if ('syntaxError' in compiled) return this.fail('exception', compiled.syntaxError);
      this.compiled = compiled;
      const evaluated = this.context.evalCode(compiled.code, PROGRAM_FILE);
      if (evaluated.error !== undefined) return this.failWith(this.own(evaluated.error));
      this.completion = this.own(evaluated.value);
      this.drive();
    });
  }

  /** A host call of this run returned `json` (absent for `undefined`). */
  settle(callId: number, json: string | undefined): void {
    const call = this.take(callId);
    if (call === undefined) return;
    this.guarded(() => {
      const value = json === undefined ? this.context.undefined : this.own(this.context.newString(json));
      this.settleCall(call, call.resolve, value);
      this.drive();
    });
  }

  /** A host call of this run failed. */
  reject(callId: number, error: HostError): void {
    const call = this.take(callId);
    if (call === undefined) return;
    this.guarded(() => {
      this.settleCall(call, call.reject, this.hostError(error));
      this.drive();
    });
  }

  /** `{ name, message, code }`, what a failed host call rejects with (the prelude makes it a ToolCallError). */
  private hostError(error: HostError): QuickJSHandle {
    const value = this.own(this.context.newObject());
    for (const key of ['name', 'message', 'code'] as const) {
      if (error[key] === undefined) continue;
      const text = this.context.newString(error[key]);
      this.context.setProp(value, key, text);
      text.dispose();
    }
    return value;
  }

  /** Calls one of a pending call's resolving functions with `value`, then frees them and `value`. */
  private settleCall(call: PendingCall, settle: QuickJSHandle, value: QuickJSHandle): void {
    try {
      this.context.unwrapResult(this.context.callFunction(settle, this.context.undefined, value)).dispose();
    } finally {
      for (const handle of [value, call.resolve, call.reject]) if (handle.alive && handle !== this.context.undefined) handle.dispose();
    }
  }

  /** The main thread asked the run to stop; a run waiting on host calls ends here. */
  stop(): void {
    const kind = this.stopKind();
    if (kind !== undefined) this.fail(kind, undefined);
  }

  private installPrelude(shapes: readonly BindingShape[]): [serialize: QuickJSHandle, describe: QuickJSHandle] {
    const { context } = this;
    const prelude = this.own(context.unwrapResult(context.evalCode(PRELUDE, 'prelude.js')));
    const hostCall = context.newFunction('hostCall', (global, name, json, chars, resolve, reject) => {
      // The JSON's length, as the prelude read it in the interpreter (reading it here would allocate
      // there, which fails when a program exhausted its memory): a call over a limit is refused before
      // its text is copied out of the WebAssembly memory (into this worker's heap, then the main thread's).
      const argsChars = context.getNumber(chars);
      const call: PendingCall = { resolve: this.own(resolve.dup()), reject: this.own(reject.dup()), argsChars };
      const refused = this.refusal(argsChars);
      if (refused !== undefined) {
        const message = `${context.getString(global)}.${context.getString(name)}: ${refused.message}`;
        return this.settleCall(call, call.reject, this.hostError({ name: 'Error', message, code: refused.code }));
      }
      const callId = this.nextCallId++;
      this.calls.set(callId, call);
      this.pendingArgsChars += argsChars;
      this.host.call(callId, context.getString(global), context.getString(name), context.getString(json));
    });
    const hostLog = context.newFunction('hostLog', (text) => {
      if (context.typeof(text) === 'string') this.log(context.getString(text));
    });
    const shapesJson = context.newString(JSON.stringify(shapes.map((shape) => [shape.global, shape.functions])));
    const limits = [this.limits.maxValueChars, this.limits.maxLogChars].map((limit) => context.newNumber(limit));
    const args = [hostCall, hostLog, shapesJson, ...limits].map((handle) => this.own(handle));
    const helpers = this.own(context.unwrapResult(context.callFunction(prelude, context.undefined, args)));
    return [this.own(context.getProp(helpers, 0)), this.own(context.getProp(helpers, 1))];
  }

  /** Why a new host call with `argsChars` characters of arguments is refused, if it is. */
  private refusal(argsChars: number): { readonly code: string; readonly message: string } | undefined {
    const { maxArgsChars, maxPendingArgsChars } = this.limits;
    if (this.calls.size >= MAX_PENDING_CALLS) {
      return { code: 'too_many_calls', message: `${MAX_PENDING_CALLS} tool calls are already pending; await some before starting more.` };
    }
    if (argsChars > maxArgsChars) {
      return {
        code: 'args_too_large',
        message: `the arguments are ${argsChars} characters as JSON, over the limit of ${maxArgsChars} per call. Send less per call: split the data, or pass a reference to it.`,
      };
    }
    if (this.pendingArgsChars + argsChars > maxPendingArgsChars) {
      return {
        code: 'pending_args_too_large',
        message: `the tool calls already pending have ${this.pendingArgsChars} characters of arguments, and this call's ${argsChars} would pass the limit of ${maxPendingArgsChars} for calls pending at once; await some before starting more.`,
      };
    }
    return undefined;
  }

  private log(text: string): void {
    if (this.overLimit) return;
    // Lines are counted as joined by newlines: each line after the first costs one more character.
    const separator = this.logs.length > 0 ? 1 : 0;
    const room = this.limits.maxLogChars - this.logChars - separator;
    if (text.length > room) {
      if (room > 0) this.logs.push(text.slice(0, room));
      this.overLimit = true; // the interrupt handler stops the program at its next check
      return;
    }
    this.logs.push(text);
    this.logChars += separator + text.length;
  }

  /** Runs the program's pending jobs, then ends the run if its promise settled or can never settle. */
  private drive(): void {
    if (this.finished) return;
    const jobs = this.runtime.executePendingJobs();
    if (jobs.error !== undefined) return this.failWith(this.own(jobs.error));
    const kind = this.stopKind();
    if (kind !== undefined) return this.fail(kind, undefined);
    const state = this.context.getPromiseState(this.completion!);
    if (state.type === 'rejected') return this.failWith(this.own(state.error));
    if (state.type === 'fulfilled') return this.succeed(this.own(state.value));
    if (this.calls.size === 0 && !this.runtime.hasPendingJob()) {
      this.fail('exception', 'The program awaits a promise that can never settle (no tool call of it is pending).');
    }
  }

  private succeed(value: QuickJSHandle): void {
    const serialized = this.context.callFunction(this.serialize!, this.context.undefined, [value]);
    if (serialized.error !== undefined) {
      const error = this.described(this.own(serialized.error));
      if (this.stopKind() !== undefined) return this.fail(this.stopKind()!, undefined);
      const reason = error !== undefined && 'message' in error ? error.message : error?.value ?? 'it could not be serialized';
      return this.fail('invalid-output', `The program's return value cannot be sent back: ${reason}. Return plain data (objects, arrays, strings, finite numbers, booleans, null).`);
    }
    const json = this.own(serialized.value);
    const type = this.context.typeof(json);
    if (type === 'object') {
      return this.fail('output-limit', `The program's return value is longer than ${this.limits.maxValueChars} characters as JSON. Return less: a summary, the relevant part, or a count.`);
    }
    if (this.overLimit) return this.fail('output-limit', undefined);
    this.finish(type === 'string' ? { json: this.context.getString(json), logs: this.logs } : { logs: this.logs });
  }

  private failWith(error: QuickJSHandle): void {
    let kind = this.stopKind();
    if (kind !== undefined) return this.fail(kind, undefined);
    const thrown = this.described(error);
    // Describing runs the program's own getters and `toString`: one that loops is stopped by the
    // interrupt handler, and the program then ran past its limit: the kind is decided after they ran.
    kind = this.stopKind();
    if (kind !== undefined) return this.fail(kind, undefined);
    // Out of memory, QuickJS cannot allocate its error object and throws null instead (and may not manage
    // to describe anything). Its memory stops growing when it cannot grow by 5% more, so a full memory
    // can be a little short of the limit.
    const full = this.memory.buffer.byteLength * 1.1 >= this.limits.memoryLimitBytes;
    if (full && (thrown === undefined || (!('message' in thrown) && thrown.value === 'null'))) {
      return this.fail('exception', `InternalError: out of memory (the program used the whole ${Math.round(this.limits.memoryLimitBytes / 2 ** 20)} MiB memory limit)`);
    }
    this.fail('exception', formatProgramError(thrown ?? { value: '[a value that could not be described]' }, this.compiled));
  }

  /** A thrown value as the prelude describes it (capped); undefined when even that failed. */
  private described(thrown: QuickJSHandle): DescribedThrow | undefined {
    const result = this.context.callFunction(this.describe!, this.context.undefined, [thrown]);
    if (result.error !== undefined) {
      result.error.dispose();
      return undefined;
    }
    const json = this.own(result.value);
    return this.context.typeof(json) === 'string' ? (JSON.parse(this.context.getString(json)) as DescribedThrow) : undefined;
  }

  private fail(kind: CodeFailureKind, message: string | undefined): void {
    const failure: CodeFailure = { kind, message: message ?? this.stopMessage(kind) };
    this.finish({ logs: this.logs, failure });
  }

  private finish(result: WorkerResult): void {
    if (this.finished) return;
    this.finished = true;
    this.calls.clear();
    this.pendingArgsChars = 0;
    this.host.done(result);
  }

  /**
   * Frees the run's interpreter, after it ended. True when that went cleanly, so its module can serve the
   * next run; false when something was left behind (a leaked object makes QuickJS abort the module).
   */
  release(): boolean {
    try {
      for (const handle of this.owned.reverse()) if (handle.alive) handle.dispose();
      this.context.dispose();
      this.runtime.dispose();
      return true;
    } catch {
      return false;
    }
  }

  private own<T extends Disposable>(handle: T): T {
    this.owned.push(handle);
    return handle;
  }

  /** Why the program must stop now, if it must. */
  private stopKind(): CodeFailureKind | undefined {
    if (this.overLimit) return 'output-limit';
    const reason = this.host.stopReason();
    if (reason === StopReason.abort) return 'abort';
    if (reason === StopReason.timeout || Date.now() >= this.deadline) return 'timeout';
    return undefined;
  }

  private stopMessage(kind: CodeFailureKind): string {
    switch (kind) {
      case 'output-limit':
        return `The program's console output passed the limit of ${this.limits.maxLogChars} characters and it was stopped. Print less, or return the data instead.`;
      case 'abort':
        return ABORTED_MESSAGE;
      default:
        return timeoutMessage(this.timeoutMs);
    }
  }

  private take(callId: number): PendingCall | undefined {
    const call = this.calls.get(callId);
    if (call === undefined) return undefined;
    this.calls.delete(callId);
    this.pendingArgsChars -= call.argsChars;
    return this.finished ? undefined : call;
  }

  /** Any host-side exception (a trap, the interpreter out of memory) ends the run as a failure. */
  private guarded(step: () => void): void {
    try {
      step();
    } catch (error) {
      const kind = this.stopKind();
      if (kind !== undefined) return this.fail(kind, undefined);
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      this.fail('exception', `The program broke the interpreter (${message}); it may have used more than the ${Math.round(this.limits.memoryLimitBytes / 2 ** 20)} MiB memory limit.`);
    }
  }
}
