/**
 * Why a program produced no value:
 * - `'exception'`: it threw (or failed to parse); the message names the line and column in its source.
 * - `'timeout'`: it ran past the runtime's time limit.
 * - `'abort'`: the request's `signal` aborted, or the runtime closed.
 * - `'worker-exit'`: the thread running it died (for example out of host memory); a fresh one replaces it.
 * - `'invalid-output'`: its completion value has no JSON form (a function, a BigInt, a cycle, `NaN`…).
 * - `'output-limit'`: its console output, or its value, passed the runtime's size limit.
 *
 * @example
 * ```ts
 * const retryable = (kind: CodeFailureKind) => kind === 'worker-exit' || kind === 'timeout';
 * ```
 */
export type CodeFailureKind = 'exception' | 'timeout' | 'abort' | 'worker-exit' | 'invalid-output' | 'output-limit';

/**
 * A program's failure, written so that a model can fix its program.
 *
 * @example
 * ```ts
 * const { failure } = await runtime.run({ program: 'return x.y', bindings: [] });
 * // failure: { kind: 'exception', message: 'ReferenceError: x is not defined\n    at line 1, column 8' }
 * ```
 */
export interface CodeFailure {
  readonly kind: CodeFailureKind;
  readonly message: string;
}

/**
 * A host function a program may call as `await global.name(args)`. Its arguments arrive as a JSON value;
 * its value (or the promise's) must be JSON-serialisable and reaches the program as a copy. When it
 * throws or rejects, the program's promise rejects with an error carrying the thrown error's `name`,
 * `message` and, when present, a string `code`. `signal` aborts when the run ends, whatever ended it.
 *
 * @example
 * ```ts
 * const lookup: HostFunction = async (args, signal) => db.find((args as { id: string }).id, { signal });
 * ```
 */
export type HostFunction = (args: unknown, signal: AbortSignal) => unknown;

/**
 * A namespace of host functions, installed as a read-only global. Names are data: `__proto__` or
 * `constructor` are installed as ordinary properties (only own enumerable keys are read).
 *
 * @example
 * ```ts
 * const binding: CodeBinding = { global: 'tools', functions: { add: ({ a, b }) => a + b } };
 * ```
 */
export interface CodeBinding {
  /** The global's name in the program, e.g. `'tools'` (any other string is reachable as `globalThis[name]`). */
  readonly global: string;
  readonly functions: Readonly<Record<string, HostFunction>>;
}

/**
 * One program to run.
 *
 * @example
 * ```ts
 * const request: CodeRunRequest = {
 *   program: 'const { sum } = await tools.add({ a: 1, b: 2 }); return sum * 2;',
 *   bindings: [{ global: 'tools', functions: { add: ({ a, b }) => ({ sum: a + b }) } }],
 *   signal: AbortSignal.timeout(10_000),
 * };
 * ```
 */
export interface CodeRunRequest {
  /**
   * The body of an async function, in TypeScript or JavaScript: it may `await` and `return` at the top
   * level. The returned value is the run's `value`.
   */
  readonly program: string;
  readonly bindings: readonly CodeBinding[];
  /** Aborting ends the run with an `'abort'` failure. */
  readonly signal?: AbortSignal;
}

/**
 * What a run produced. `failure` is absent when the program returned; `value` is then its JSON value
 * (`undefined` when it returned nothing). `logs` holds what it printed, in order, either way.
 *
 * @example
 * ```ts
 * const result = await runtime.run(request);
 * if (result.failure) console.error(result.failure.kind, result.failure.message);
 * else console.log(result.value, result.logs);
 * ```
 */
export interface CodeRunResult {
  readonly value?: unknown;
  /** One entry per `console.log` / `info` / `warn` / `error` / `debug` call; warnings and errors are prefixed. */
  readonly logs: readonly string[];
  readonly failure?: CodeFailure;
}

/**
 * Where programs run. A runtime never rejects a run: every outcome, including a crash of its own
 * machinery, resolves as a {@link CodeRunResult}. Runs are isolated from each other.
 *
 * A program is untrusted, so a runtime must bound everything a program sends the host, and check each
 * bound before the data is copied into the host's memory: the size of one call's arguments, the total
 * size of the arguments of the calls pending at once, the number of calls pending at once, console
 * output, and the returned value (and the text of a thrown value). A call over a bound rejects inside
 * the program, its host function never called; output over a bound ends the run (`'output-limit'`).
 * Then a program's host-side footprint is bounded whatever it does. `createQuickJSRuntime`'s
 * options name its bounds and their defaults.
 *
 * @example
 * ```ts
 * const runtime: CodeRuntime = createQuickJSRuntime({ timeoutMs: 10_000 });
 * const { value } = await runtime.run({ program: 'return 6 * 7', bindings: [] });
 * await runtime.close();
 * ```
 */
export interface CodeRuntime {
  /** The languages it accepts, for humans and for a tool description. */
  readonly language: string;
  /** How programs are isolated from the host, as an honest label (e.g. `'wasm-worker'`). */
  readonly isolation: string;
  /**
   * In a durable turn, how long (milliseconds) a program whose only tool calls in flight wait for
   * suspended approvals may go without making another call before it is stopped (its call is then
   * `suspended`): time for a program that is still computing to make its next call — for a runtime
   * on a worker thread, a message round trip. Stopping a program too early is never wrong (it runs
   * again on resume, its finished calls answered from the journal), only more work.
   * @default 20
   */
  readonly settleMs?: number;
  /** Runs one program with its bindings; resolves with its value or its failure, never rejects. */
  run(request: CodeRunRequest): Promise<CodeRunResult>;
  /** Ends every run in flight (they resolve as `'abort'`), waits for them, and releases the runtime. */
  close(): Promise<void>;
}
