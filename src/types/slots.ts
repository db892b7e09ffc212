// Per-call slots and tool traits: state a layer keeps with one call, or marks on a tool, that the engine
// stores without knowing what it holds. (A leaf: shapes only; the functions that make keys are in
// util/slots.ts.)

/**
 * A key for state a layer keeps with one call. Like an OpenTelemetry context key, but the value may be
 * set for the call's life (one writer per key): only code holding the key can read or write it, and
 * the engine, which stores the value, never reads it. `id` is a registered symbol (`Symbol.for(name)`),
 * so the ESM and CJS builds of toolstream loaded in one process share the key. Made by `callKey`.
 *
 * @example
 * ```ts
 * const DURABLE_CALL: CallKey<DurableCall> = callKey<DurableCall>('toolstream.durableCall');
 * ```
 */
export interface CallKey<T> {
  /** `Symbol.for(name)`: what the slots are keyed by. */
  readonly id: symbol;
  readonly name: string;
  /** Never set: it only ties the key to its value's type. */
  readonly __callValue?: T;
}

/**
 * The read side of one call's slots: given to bodies (through the reader functions a layer exports,
 * e.g. `durableCallOf(ctx)`) and to whoever sees the call.
 *
 * @example
 * ```ts
 * const where = (slots: CallSlotsView) => slots.get(DURABLE_CALL)?.index;
 * ```
 */
export interface CallSlotsView {
  /** The value set under `key` for this call; `undefined` if none was. */
  get<T>(key: CallKey<T>): T | undefined;
}

/**
 * One call's slots, read and write: given to the code of a layer that drives the call (a stage tap, a
 * hook). Values live as long as the call's record; a call nobody sets a slot on costs nothing.
 *
 * @example
 * ```ts
 * decided: (call: CallView) => call.slots.set(DURABLE_CALL, { turn, index: call.index, resumed: false, leaseHeld }),
 * ```
 */
export interface CallSlots extends CallSlotsView {
  set<T>(key: CallKey<T>, value: T): void;
}

/**
 * A key for a trait a layer puts on a tool (a fact about the tool, not one call): the tool is copied
 * and frozen with the trait, and only code holding the key reads it. Registered like a `CallKey`, so a
 * tool marked by one build is recognised by the other. Made by `toolKey`.
 *
 * @example
 * ```ts
 * const REATTACHING: ToolKey<true> = toolKey<true>('toolstream.reattachingTool');
 * const tool = withTrait(implementTool(contract, body), REATTACHING, true);
 * ```
 */
export interface ToolKey<T> {
  /** `Symbol.for(name)`: the property of the tool that holds the trait. */
  readonly id: symbol;
  readonly name: string;
  /** Never set: it only ties the key to its value's type. */
  readonly __toolValue?: T;
}
