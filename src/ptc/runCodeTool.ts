import { z } from 'zod';
import { defineTool } from '../tool/defineTool.js';
import { ConfigError } from '../util/errors.js';
import { describeError } from '../util/describe.js';
import { isPipelineAware, PIPELINE_HOOK, type PipelineAwareTool } from '../engine/layerState/pipelineAware.js';
import { isCount, MAX_TIMER_MS } from '../util/validate.js';
import { renderValue } from '../util/renderContent.js';
import type { PipelineHandle } from '../engine/pipelineHandle.js';
import type { PendingApproval } from '../types/pendingApproval.js';
import type { AnyTool, ToolMode } from '../types/tool.js';
import type { ApprovalPendingError } from '../types/toolError.js';
import { describeTools } from './describeTools.js';
import type { SubCallsOmitted, SubDispatch } from './subCallLog.js';
import { SubCalls } from './subCalls.js';
import type { CodeFailure, CodeRunResult, CodeRuntime } from './types.js';
import { workspacePaths, type ShowPaths } from './workspacePaths.js';
import { brand } from '../util/brand.js';
import { outcome } from '../util/outcome.js';
import { markDurableProgram, programJournalOf } from '../durable/durableProgram.js';

/**
 * Options of {@link runCodeTool}.
 *
 * @example
 * ```ts
 * const options: RunCodeToolOptions = { runtime: createQuickJSRuntime(), maxParallelSubCalls: 4, maxLoggedChars: 200_000 };
 * ```
 */
export interface RunCodeToolOptions {
  /** Where programs run. */
  readonly runtime: CodeRuntime;
  /** The tool's name. @default 'run_code' */
  readonly name?: string;
  /**
   * How many of a program's tool calls may run at once (each by its own mode). Unset, a program's
   * calls never run more bodies at once than the pipeline's `concurrency`, the bound the host set for
   * tool bodies; set it to raise or lower that bound for programs explicitly. Each program has a pool of
   * its own: two programs running together (a `parallel` `run_code`) may each use the whole bound.
   * @default the pipeline's `concurrency`
   */
  readonly maxParallelSubCalls?: number;
  /** How the program itself is scheduled among the model's other calls. @default 'exclusive' */
  readonly mode?: ToolMode;
  /** Text that leads the tool's description, before the generated one. */
  readonly description?: string;
  /**
   * Sub-calls a program's log holds entries for (`ProgramOutput.subCalls`, `ProgramError.subCalls`):
   * the first ones it made. The calls past it still run; they are counted in `subCallsOmitted`.
   * @default 1000
   */
  readonly maxLoggedSubCalls?: number;
  /**
   * Characters of arguments (as JSON) and error messages a program's log holds, spent as the calls
   * finish: arguments that do not fit are left out whole (`args: undefined`), a message is cut. What
   * is left out is counted in `subCallsOmitted`. @default 1_000_000
   */
  readonly maxLoggedChars?: number;
  /**
   * The directory the tools work in (the `root` of a `pathSandbox`, usually). The program and the
   * model see the host's absolute paths under it relative to it — `/home/me/project/src/a.ts` as
   * `src/a.ts`, the directory itself as `.` — in the tools' results and errors a program receives,
   * and in what it returns, prints or fails with; the relative paths a program sends back are the
   * sandbox's to resolve. The host's sub-call log (`ProgramOutput.subCalls`) keeps them as they were.
   * @default none: paths are shown as the tools return them
   */
  readonly workspace?: string;
}

/**
 * What a program that returned produced: `result.value` of a `run_code` call. The model sees only the
 * value and the logs; the sub-call log is for the host, to reconstruct what happened.
 *
 * @example
 * ```ts
 * if (result.status === 'ok') {
 *   const { value, logs, subCalls } = result.value as ProgramOutput;
 * }
 * ```
 */
export interface ProgramOutput {
  /** What the program returned (a JSON value), `undefined` when it returned nothing. */
  readonly value: unknown;
  readonly logs: readonly string[];
  /** The log of its tool calls, in the order it made them, within `maxLoggedSubCalls` and `maxLoggedChars`. */
  readonly subCalls: readonly SubDispatch[];
  /** What the log left out. */
  readonly subCallsOmitted: SubCallsOmitted;
}

/**
 * Why a program failed; the `cause` of a `run_code` call's `tool_error`. Its message, written for the
 * model, names the failure, the logs, and the tool calls the program made before it failed.
 *
 * @example
 * ```ts
 * if (result.error?.code === 'tool_error' && result.error.cause instanceof ProgramError) {
 *   console.log(result.error.cause.failure.kind, result.error.cause.subCalls.length);
 * }
 * ```
 */
export class ProgramError extends Error {
  static {
    brand(this, 'ProgramError');
  }

  override readonly name = 'ProgramError';
  /** @internal Made by `runCodeTool`. */
  constructor(
    readonly failure: CodeFailure,
    readonly logs: readonly string[],
    /** As {@link ProgramOutput.subCalls}. */
    readonly subCalls: readonly SubDispatch[],
    /** As {@link ProgramOutput.subCallsOmitted}. */
    readonly subCallsOmitted: SubCallsOmitted,
    /** What the model is shown of the message (`runCodeTool({ workspace })`); the fields keep the host's view. */
    show: ShowPaths = (text) => text,
  ) {
    super(show(describeFailure(failure, logs, subCalls, subCallsOmitted)));
  }
}

/** `CodeRuntime.settleMs` unless set: a worker thread answers well within it. */
const DEFAULT_SETTLE_MS = 20;

const DESCRIPTION = [
  'Run a program that calls tools and returns one result. The program is the body of an async function,',
  'in TypeScript or JavaScript: call tools with `await tools.name(args)` (run independent calls together',
  'with Promise.all), process their results in code, and `return` only what you need. A failed tool call',
  'throws a ToolCallError with `code` and `message`, which you may catch. console.log output is shown to',
  'you. There is no network, file system, timers or require: only the tools below.',
].join(' ');

/**
 * A tool whose argument is a program, run in `runtime`, that calls the pipeline's other tools through a
 * `tools` namespace. Register it in a pipeline like any tool: each of the program's calls goes through
 * that same pipeline (restrictions, validation, pre-execute policies, guard, approval, execute,
 * post-execute), so writing a program bypasses nothing. The program sees the tools the pipeline makes
 * available (restrictions applied), not `run_code` itself; the description lists them as TypeScript
 * declarations. The model sees what the program returned and printed; the result's `value` is a
 * {@link ProgramOutput} with the log of every sub-call. A failed program is a `tool_error` whose cause
 * is a {@link ProgramError}. Cancelling the call aborts the program and its unfinished sub-calls.
 *
 * A program's calls run in a pool of its own, bounded by the pipeline's `concurrency` unless
 * `maxParallelSubCalls` sets another bound. A tool with `start: 'after-response'` cannot be called from
 * a program: it starts only once the model's response has ended, and the program runs inside that
 * response, so the call is refused at once (a `ToolCallError` with code `restricted` in the program;
 * `denied` in the log) and never runs. The description leaves it out of the declarations and names it
 * as a tool to call directly.
 *
 * In a durable turn (a pipeline with a `journal`, run with a `turn`) the sub-calls are journaled under
 * the program's call. A sub-call whose approver suspends it never settles in the program; once only
 * suspended sub-calls are in flight (and no call came for the runtime's `settleMs`), the program is
 * stopped and its call is `suspended` (`approval_pending`); `pipeline.pendingApprovals(turn)` lists
 * every sub-call's approval. `resume` runs the program again from the start, and each call it makes
 * again (same tool, same arguments) that finished is answered from the journal instead of running:
 * nothing that finished runs twice. The program must be deterministic for that: the same answers must
 * lead it to the same calls. A call whose arguments hold the clock or a random value is a new call each
 * run — unless its tool is not idempotent and a body of it started at the same place (the program's
 * `n`-th call) in a run before: then it is answered from that call's journal (its result, or
 * `outcome_unknown`) and never runs again. A program that branches on such values may make calls its
 * first run did not.
 *
 * @throws {ConfigError} for an invalid option.
 *
 * @example
 * ```ts
 * const runtime = createQuickJSRuntime({ timeoutMs: 20_000 });
 * const pipeline = createPipeline({
 *   tools: [readFile, listFiles, runCodeTool({ runtime })],
 *   pre: [pathSandbox({ root })],
 * });
 * // The model calls run_code with:
 * // { program: `const files = await tools.list_files({ dir: 'src' });
 * //             const sizes = await Promise.all(files.map((path) => tools.read_file({ path })));
 * //             return sizes.map((text, i) => ({ path: files[i], lines: text.split('\n').length }));` }
 * ```
 */
export function runCodeTool(options: RunCodeToolOptions): AnyTool {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('runCodeTool', option, expected, received);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  const {
    runtime,
    name = 'run_code',
    maxParallelSubCalls,
    mode = 'exclusive',
    description = DESCRIPTION,
    maxLoggedSubCalls = 1000,
    maxLoggedChars = 1_000_000,
    workspace,
  } = options;
  if (typeof runtime?.run !== 'function' || typeof runtime.close !== 'function') fail('runtime', 'a CodeRuntime', runtime);
  const { settleMs = DEFAULT_SETTLE_MS } = runtime;
  if (typeof settleMs !== 'number' || !(settleMs >= 0 && settleMs <= MAX_TIMER_MS)) fail('runtime.settleMs', `0 to ${MAX_TIMER_MS} milliseconds`, settleMs);
  if (maxParallelSubCalls !== undefined && !isCount(maxParallelSubCalls, 1)) {
    fail('maxParallelSubCalls', 'a positive integer or Infinity', maxParallelSubCalls);
  }
  if (typeof description !== 'string') fail('description', 'a string', description);
  if (!isCount(maxLoggedSubCalls, 0)) fail('maxLoggedSubCalls', 'a non-negative integer or Infinity', maxLoggedSubCalls);
  if (!isCount(maxLoggedChars, 0)) fail('maxLoggedChars', 'a non-negative integer or Infinity', maxLoggedChars);
  if (workspace !== undefined && (typeof workspace !== 'string' || workspace === '')) fail('workspace', 'a directory (a non-empty path)', workspace);
  const show = workspacePaths(workspace);
  const logLimits = { maxEntries: maxLoggedSubCalls, maxChars: maxLoggedChars };

  const input = z.object({
    program: z.string().describe('The body of an async function in TypeScript or JavaScript; `return` the result.'),
  });
  const unbound = defineTool({
    name,
    description,
    input,
    mode,
    execute: () => {
      throw new Error(`${name} runs only inside a pipeline: register it in createPipeline({ tools })`);
    },
  });

  const bind = (pipeline: PipelineHandle): AnyTool => {
    const tools = pipeline.tools.filter((tool) => !isPipelineAware(tool) && tool.name !== name);
    // Sub-calls: the pipeline's stages, a pool of their own, and no tool of the program (no nested
    // programs). A failure or a `cancelRest()` cancels no other sub-call (the program decides), and the
    // batch completes only once every body has settled or been abandoned after `abortGraceMs`, so the
    // program's own call — and the barrier it holds among the model's calls — outlasts every body it started.
    const batch = pipeline.subBatch({
      tools: tools.map((tool) => tool.name),
      concurrency: maxParallelSubCalls ?? pipeline.concurrency,
      cancelRest: 'none',
      complete: 'when-settled',
    });
    const afterResponse = new Set(tools.filter((tool) => tool.start === 'after-response').map((tool) => tool.name));
    const bound = defineTool({
      name,
      description: describeProgramTools(description, tools, workspace !== undefined),
      input,
      mode,
      render: (output: ProgramOutput) => show(renderOutput(output)),
      execute: async ({ program }, ctx): Promise<ProgramOutput> => {
        // In a durable turn: this run's journal of the sub-calls, and a stop for when only approvals can move it on.
        const journal = await programJournalOf(ctx)?.open();
        const stop = new AbortController();
        const subCalls = new SubCalls(batch, afterResponse, ctx.callId, ctx.signal, logLimits, journal && { journal, settleMs, onStuck: () => stop.abort() }, show);
        const functions = Object.fromEntries(tools.map((tool) => [tool.name, subCalls.functionFor(tool.name)]));
        let result: CodeRunResult;
        try {
          result = await runtime.run({ program, bindings: [{ global: 'tools', functions }], signal: AbortSignal.any([ctx.signal, stop.signal]) });
        } catch (error) {
          // A runtime should never reject (ours does not); one that does still gets its sub-calls closed.
          result = { logs: [], failure: { kind: 'worker-exit', message: `The code runtime failed: ${describeError(error)}` } };
        }
        const { entries, omitted } = await subCalls.close();
        const approvals = subCalls.approvals();
        if (journal !== undefined && stop.signal.aborted && !ctx.signal.aborted && result.failure?.kind === 'abort' && approvals.length > 0) {
          await journal.suspended(approvals);
          throw outcome.suspended(suspendedError(name, approvals)); // thrown: the body's type is its output's
        }
        if (result.failure !== undefined) throw new ProgramError(result.failure, result.logs, entries, omitted, show);
        return { value: result.value, logs: result.logs, subCalls: entries, subCallsOmitted: omitted };
      },
    });
    // Still pipeline-aware: other programs leave it out, and another pipeline binds it anew. A durable
    // turn runs it again on resume (its sub-calls journaled), where it would not re-run another tool.
    return markDurableProgram(withHook(bound, bind));
  };
  return withHook(unbound, bind);
}

/**
 * The description of the program's tools: the declarations of those it may call, and the names of the
 * `after-response` ones, which a program cannot call (they start only after the model's response, and
 * the program runs inside it; a call is refused at once).
 */
function describeProgramTools(description: string, tools: readonly AnyTool[], workspace: boolean): string {
  const callable = tools.filter((tool) => tool.start !== 'after-response');
  const afterResponse = tools.filter((tool) => tool.start === 'after-response').map((tool) => tool.name);
  const relative = workspace ? ' Paths are relative to the workspace.' : '';
  const declarations = `${description}${relative}\n\n${describeTools(callable)}`;
  if (afterResponse.length === 0) return declarations;
  return `${declarations}\n\nNot callable from a program, as they start only after your response has ended: ${afterResponse.join(', ')}. Call them directly, as tool calls of their own.`;
}

function withHook(tool: AnyTool, bind: (pipeline: PipelineHandle) => AnyTool): PipelineAwareTool {
  return Object.freeze({ ...tool, [PIPELINE_HOOK]: bind });
}

/** A program stopped on the approvals of its sub-calls: its call's error, with the first of them (`pendingApprovals` lists all). */
function suspendedError(name: string, approvals: readonly PendingApproval[]): ApprovalPendingError {
  const asked = approvals.map((approval) => `"${approval.tool}" (${approval.reasons.join('; ') || 'approval required'})`);
  const listed = asked.length <= 5 ? asked.join(', ') : `${asked.slice(0, 5).join(', ')} and ${asked.length - 5} more`;
  return {
    code: 'approval_pending',
    message: `Suspended: the program of "${name}" waits for a human's approval of ${approvals.length} of its tool call(s): ${listed}. Resuming runs it again from the start; its tool calls that finished are answered from the journal.`,
    approval: approvals[0]!,
  };
}

/** The model's view of a program's output: its value, then what it printed. */
function renderOutput(output: ProgramOutput): string {
  const value = output.value === undefined ? '(the program returned no value)' : renderValue(output.value, false);
  return output.logs.length === 0 ? value : `${value}\n\n[console output]\n${output.logs.join('\n')}`;
}

function describeFailure(failure: CodeFailure, logs: readonly string[], subCalls: readonly SubDispatch[], omitted: SubCallsOmitted): string {
  const parts = [`The program failed (${failure.kind}): ${failure.message}`];
  const made = subCalls.length + omitted.entries;
  if (made > 0) {
    // The summary covers the logged calls; the model is told how many more there were.
    const summary = subCalls.length === 0 ? '' : `: ${summarize(subCalls)}${omitted.entries > 0 ? `, and ${omitted.entries} more` : ''}`;
    parts.push(`Before it failed it made ${made} tool call(s)${summary}.`);
  }
  if (logs.length > 0) parts.push(`[console output]\n${logs.join('\n')}`);
  return parts.join('\n\n');
}

/** `read_file (ok) ×3, write_file (denied)`: calls grouped by tool and outcome, in first-call order. */
function summarize(subCalls: readonly SubDispatch[]): string {
  const counts = new Map<string, number>();
  for (const sub of subCalls) {
    const key = `${sub.name} (${sub.status === 'ok' ? 'ok' : sub.error?.code ?? sub.status})`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const groups = [...counts].map(([key, count]) => (count === 1 ? key : `${key} ×${count}`));
  return groups.length <= 20 ? groups.join(', ') : `${groups.slice(0, 20).join(', ')}, and ${groups.length - 20} more kinds`;
}
