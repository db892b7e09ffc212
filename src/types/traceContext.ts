// Trace context that travels with a call beyond its process (a fleet job), and the worker's hook around
// a job's body. Shapes only: no OpenTelemetry type appears here, so the fleet needs none. (A leaf.)

/**
 * A propagation carrier: the text fields a trace context travels in, as a propagator writes them (W3C
 * `traceparent` and `tracestate`, and `baggage` if one is configured).
 *
 * @example
 * ```ts
 * const carrier: TraceCarrier = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };
 * ```
 */
export type TraceCarrier = Readonly<Record<string, string>>;

/**
 * What a worker tells a {@link JobObserver} about a job whose body is about to run (every check passed).
 *
 * @example
 * ```ts
 * const label = (job: ObservedJob) => `${job.queue}/${job.jobId}: ${job.tool} (call ${job.callId}, attempt ${job.attempt})`;
 * ```
 */
export interface ObservedJob {
  readonly jobId: string;
  readonly queue: string;
  readonly tool: string;
  readonly callId: string;
  readonly index: number;
  readonly turn: string | undefined;
  readonly attempt: number;
  /** The trace context the agent's call sent with the job (when its pipeline traces, e.g. `toolTracing()`); `undefined` if none. */
  readonly traceContext: TraceCarrier | undefined;
}

/**
 * How a job's body ended, as a {@link JobObserver} is told: `ok`, or the failure's code (`tool_failed`,
 * `timeout`, `cancelled`) and text.
 *
 * @example
 * ```ts
 * const failed = (end: JobEnd) => end.ok ? undefined : end.code;
 * ```
 */
export type JobEnd = { readonly ok: true } | { readonly ok: false; readonly code: string; readonly message: string };

/**
 * One job's watch: the worker runs the body's whole course through `run` — the call and, for a streamed
 * output, every item — and then calls `end` once. `run` must call `body` once, synchronously, and return
 * what it returned (a span's `context.with` does).
 *
 * @example
 * ```ts
 * const watch: JobWatch = { run: (body) => body(), end: (how) => console.log(how.ok ? 'ok' : how.code) };
 * ```
 */
export interface JobWatch {
  /** Runs the body (once, synchronously) inside the watch and returns what it returns. */
  run<T>(body: () => T): T;
  /** Called once, when the body's whole course has ended, with how. */
  end(how: JobEnd): void;
}

/**
 * A worker's hook around each job's body (`createToolWorker({ observe })`): given the job, a watch for
 * its body, or `undefined` to leave it alone. `workerTracing()` of `toolstream/otel` is one: the body
 * runs in a span that continues the agent's trace. It must not throw (a throw is reported as a process
 * warning and the body runs unwatched).
 *
 * @example
 * ```ts
 * const timing: JobObserver = (job) => {
 *   const started = performance.now();
 *   return { run: (body) => body(), end: () => histogram.record(performance.now() - started, { tool: job.tool }) };
 * };
 * ```
 */
export type JobObserver = (job: ObservedJob) => JobWatch | undefined;
