import type { CallHooks } from '../types/hooks.js';

/**
 * The key of a layer observer's hook factory. Registered (`Symbol.for`), so an observer made by one
 * build of toolstream (CJS) is recognised by a pipeline of the other (ESM), as for `PIPELINE_HOOK`.
 */
export const LAYER_HOOKS: unique symbol = Symbol.for('toolstream.layerHooks') as typeof LAYER_HOOKS;

/**
 * An observer that watches each run from inside, as a layer: for every run (every subscription) the
 * pipeline asks it for the engine's call hooks (`CallHooks`) of that run, and calls them at each moment
 * of each call, after a durable turn's journal and before the events layer. Made by toolstream's own
 * layers (`toolTracing()` of `toolstream/otel`) and passed in `observers`; opaque to users. Nothing of
 * it runs in a pipeline that is not given one.
 *
 * @example
 * ```ts
 * const pipeline = createPipeline({ tools, observers: [toolTracing()] }); // toolTracing() is a LayerObserver
 * ```
 */
export interface LayerObserver {
  /** @internal The run's call hooks, asked once per run. */
  readonly [LAYER_HOOKS]: () => RunHooks;
}

/**
 * @internal A layer observer's hooks of one run: the call hooks, and `closed`, called once when the
 * run's subscription ends — completed, errored or unsubscribed. After a completion or an error every
 * call had its `finished`; after an unsubscribe, calls still in flight never get one, and `closed` is
 * where the layer ends what it opened for them.
 */
export interface RunHooks extends CallHooks {
  readonly closed?: () => void;
}

/**
 * Whether `value` is a {@link LayerObserver} (of any build of toolstream).
 *
 * @example
 * ```ts
 * const layers = observers.filter(isLayerObserver);
 * ```
 */
export function isLayerObserver(value: unknown): value is LayerObserver {
  return typeof value === 'object' && value !== null && typeof (value as Partial<LayerObserver>)[LAYER_HOOKS] === 'function';
}
