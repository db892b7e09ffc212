import type { DurableSettings } from './settings.js';

/**
 * Where a pipeline keeps its durability settings for the layers that work beside it: a loop's
 * continuation is signed with the pipeline's secret and made single-use in its journal store, as
 * approval tokens are. Registered (`Symbol.for`) and not enumerable, so a pipeline from one build of
 * toolstream (ESM) is read by an adapter of another (CJS), and nothing lists it.
 */
const DURABILITY = Symbol.for('toolstream.durability');

/** Gives `pipeline` its durability settings (none without a journal); `pipeline` is returned, not frozen yet. */
export function attachDurability<P extends object>(pipeline: P, durable: DurableSettings | undefined): P {
  if (durable !== undefined) Object.defineProperty(pipeline, DURABILITY, { value: durable, enumerable: false });
  return pipeline;
}

/** The durability settings of a pipeline made by `createPipeline` with a `journal`; `undefined` otherwise. */
export function durabilityOf(pipeline: unknown): DurableSettings | undefined {
  if (typeof pipeline !== 'object' || pipeline === null) return undefined;
  return (pipeline as { readonly [DURABILITY]?: DurableSettings })[DURABILITY];
}
