import type { AnyTool, ToolContext } from '../../types/tool.js';
import type { CallRecord } from '../records/callRecord.js';

/**
 * The marks that let a durable turn and a tool whose body runs elsewhere (a job on a worker fleet) find
 * each other. Registered symbols (`Symbol.for`), like the program marks, so every build of toolstream
 * loaded in one process shares them.
 */
const REATTACHING_TOOL = Symbol.for('toolstream.reattachingTool');
export const DURABLE_CALL: unique symbol = Symbol.for('toolstream.durableCall') as typeof DURABLE_CALL;
export const ATTEMPT: unique symbol = Symbol.for('toolstream.attempt') as typeof ATTEMPT;

/**
 * Where a call of a durable turn stands in its journal: the journal key, the call's slot there, and
 * whether a process started its body before (this run is a resume of a started call). `turn` and
 * `index` name the call uniquely and stably across processes and resumes.
 */
export interface DurableCall {
  readonly turn: string;
  readonly index: number;
  readonly resumed: boolean;
  /**
   * Whether this process still drives the call's turn: false once it lost the turn's lease to another
   * process. The body is then aborted as the run stops, but what it started elsewhere (a job) is the
   * new owner's — it re-attaches to it — and must not be cancelled.
   */
  leaseHeld(): boolean;
}

/**
 * Marks a tool whose body, invoked again for the same durable call, re-attaches to the effect it
 * started before (a job with an id derived from the call) instead of repeating it: a resumed turn runs
 * a started call of such a tool again, like an idempotent one, and its journaled approval still admits it.
 */
export function markReattaching<T extends AnyTool>(tool: T): T {
  return Object.freeze({ ...tool, [REATTACHING_TOOL]: true });
}

export function isReattaching(tool: AnyTool | undefined): boolean {
  return tool !== undefined && (tool as unknown as Record<symbol, unknown>)[REATTACHING_TOOL] === true;
}

const calls = new WeakMap<CallRecord, DurableCall>();

/** A durable batch tells the call where it stands (read by the body through its `ctx`). */
export function attachDurableCall(record: CallRecord, call: DurableCall): void {
  calls.set(record, call);
}

export function durableCallOfRecord(record: CallRecord): DurableCall | undefined {
  return calls.get(record);
}

/** Where the call whose body received `ctx` stands in its durable turn; `undefined` outside one. */
export function durableCallOf(ctx: ToolContext): DurableCall | undefined {
  return (ctx as unknown as { readonly [DURABLE_CALL]?: DurableCall })[DURABLE_CALL];
}

/** Which attempt of its call's body `ctx` was made for (1 unless the tool's `retry` ran it again). */
export function attemptOf(ctx: ToolContext): number {
  return (ctx as unknown as { readonly [ATTEMPT]?: number })[ATTEMPT] ?? 1;
}
