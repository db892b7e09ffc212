import type { AnyTool, ToolContext } from '../types/tool.js';
import { callKey, slotsOf, toolKey, traitOf, withTrait } from '../util/slots.js';

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
 * The slot where a durable batch tells a call where it stands (set once its decision is journaled).
 * Registered under the name the library has always used, so every build loaded in one process shares it.
 *
 * @example
 * ```ts
 * record.set(DURABLE_CALL, { turn, index: slot, resumed: false, leaseHeld: () => !lease.lost });
 * ```
 */
export const DURABLE_CALL = callKey<DurableCall>('toolstream.durableCall');

/**
 * Where the call whose body received `ctx` stands in its durable turn; `undefined` outside one.
 *
 * @example
 * ```ts
 * const durable = durableCallOf(ctx);
 * const jobId = durable === undefined ? `ts-${randomUUID()}` : durableJobId(durable.turn, durable.index, attemptOf(ctx));
 * ```
 */
export function durableCallOf(ctx: ToolContext): DurableCall | undefined {
  return slotsOf(ctx)?.get(DURABLE_CALL);
}

/** The trait of a tool whose body re-attaches to the effect it started before (see `markReattaching`). */
const REATTACHING = toolKey<true>('toolstream.reattachingTool');

/**
 * Marks a tool whose body, invoked again for the same durable call, re-attaches to the effect it
 * started before (a job with an id derived from the call) instead of repeating it: a resumed turn runs
 * a started call of such a tool again, like an idempotent one, and its journaled approval still admits it.
 *
 * @example
 * ```ts
 * const tools = contracts.map((contract) => markReattaching(implementTool(contract, dispatch)));
 * ```
 */
export function markReattaching<T extends AnyTool>(tool: T): T {
  return withTrait(tool, REATTACHING, true);
}

/**
 * Whether `tool` was marked by `markReattaching` (in any build of toolstream).
 *
 * @example
 * ```ts
 * if (isReattaching(record.tool)) runAgain(record);
 * ```
 */
export function isReattaching(tool: AnyTool | undefined): boolean {
  return traitOf(tool, REATTACHING) === true;
}
