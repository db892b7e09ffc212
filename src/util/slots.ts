import type { AnyTool, ToolContext } from '../types/tool.js';
import type { CallKey, CallSlotsView, ToolKey } from '../types/slots.js';

// Keys are registered symbols (`Symbol.for`), never objects compared by identity: the ESM and CJS builds
// of toolstream loaded in one process each make their own key objects, and must still find each other's
// values (a CJS `run_code` in an ESM pipeline's durable turn reads the journal the ESM journal set).

/**
 * Makes the key of a per-call slot. `name` is registered process-wide: give it a prefix of your own
 * (`toolstream.` is the library's).
 *
 * @example
 * ```ts
 * export const PROGRAM_JOURNAL = callKey<ProgramJournal>('toolstream.programJournal');
 * ```
 */
export function callKey<T>(name: string): CallKey<T> {
  return Object.freeze({ id: Symbol.for(name), name });
}

/**
 * Makes the key of a tool trait (see `withTrait`). `name` is registered process-wide, as for `callKey`.
 *
 * @example
 * ```ts
 * const DURABLE_PROGRAM = toolKey<true>('toolstream.durableProgramTool');
 * ```
 */
export function toolKey<T>(name: string): ToolKey<T> {
  return Object.freeze({ id: Symbol.for(name), name });
}

/**
 * A frozen copy of `tool` that carries `value` under `key` (and every trait `tool` carried). The trait
 * is an own property keyed by the key's registered symbol, so copies of the tool made by spreading it
 * keep it.
 *
 * @example
 * ```ts
 * const remote = withTrait(implementTool(contract, dispatch), REATTACHING, true);
 * ```
 */
export function withTrait<Tool extends AnyTool, T>(tool: Tool, key: ToolKey<T>, value: T): Tool {
  return Object.freeze({ ...tool, [key.id]: value });
}

/**
 * The trait `tool` carries under `key`; `undefined` if it carries none (or there is no tool).
 *
 * @example
 * ```ts
 * const runsAgain = (tool: AnyTool | undefined) => traitOf(tool, DURABLE_PROGRAM) === true;
 * ```
 */
export function traitOf<T>(tool: AnyTool | undefined, key: ToolKey<T>): T | undefined {
  return tool === undefined ? undefined : ((tool as unknown as Record<symbol, unknown>)[key.id] as T | undefined);
}

/**
 * The property of a body's `ctx` that holds its call's slots (read side). The engine's context defines
 * it; layers read it through `slotsOf`, never by name.
 */
export const CALL_SLOTS: unique symbol = Symbol.for('toolstream.callSlots') as typeof CALL_SLOTS;

/**
 * The slots of the call whose body received `ctx`, for a layer's reader function; `undefined` for a
 * `ctx` the pipeline did not make (a body called directly, in a test).
 *
 * @example
 * ```ts
 * export const durableCallOf = (ctx: ToolContext) => slotsOf(ctx)?.get(DURABLE_CALL);
 * ```
 */
export function slotsOf(ctx: ToolContext): CallSlotsView | undefined {
  return (ctx as Partial<Record<typeof CALL_SLOTS, CallSlotsView>>)[CALL_SLOTS];
}
