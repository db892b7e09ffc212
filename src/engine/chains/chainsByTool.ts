import type { AnyTool, ToolChains } from '../../types/tool.js';

/** A chain's functions, outermost first, and their names (for traces and messages). */
export interface Chain<F> {
  readonly middleware: readonly F[];
  readonly names: readonly string[];
}

/**
 * The chain a call runs: the pipeline's middleware, then its tool's own (`tool.chains`), composed once
 * per tool and kept for the subscription — and, outside both, its run's layers' own (`outer`: the
 * durable journal's), composed once per run and tool. `undefined` when all are empty, so a call of a
 * tool without middleware in a pipeline and a run without any pays three property reads and nothing else.
 *
 * @example
 * ```ts
 * const executeChains = new ChainsByTool('execute', { middleware: settings.execute, names: settings.executeNames });
 * const chain = executeChains.of(record.tool, record.hooks?.execute); // undefined: invoke the body directly
 * ```
 */
export class ChainsByTool<K extends keyof ToolChains> {
  private readonly byTool = new Map<AnyTool, Chain<Entry<K>>>();
  /**
   * The run's layers' chain last seen, and what its calls run, by tool. A `ChainsByTool` serves one
   * subscription, whose calls share one run's hooks: the entry is made once and then only read.
   */
  private outer: Chain<Entry<K>> | undefined = undefined;
  private readonly byToolWithin = new Map<AnyTool | undefined, Chain<Entry<K>>>();

  constructor(
    private readonly kind: K,
    private readonly pipeline: Chain<Entry<K>>,
  ) {}

  of(tool: AnyTool | undefined, outer?: Chain<Entry<K>>): Chain<Entry<K>> | undefined {
    if (outer === undefined) return this.inner(tool);
    if (outer !== this.outer) {
      this.outer = outer;
      this.byToolWithin.clear();
    }
    let chain = this.byToolWithin.get(tool);
    if (chain === undefined) {
      const inner = this.inner(tool);
      chain = inner === undefined ? outer : { middleware: [...outer.middleware, ...inner.middleware], names: [...outer.names, ...inner.names] };
      this.byToolWithin.set(tool, chain);
    }
    return chain;
  }

  /** The pipeline's and the tool's. */
  private inner(tool: AnyTool | undefined): Chain<Entry<K>> | undefined {
    const own = tool?.chains?.[this.kind] as readonly Entry<K>[] | undefined;
    if (own === undefined) return this.pipeline.middleware.length === 0 ? undefined : this.pipeline;
    let chain = this.byTool.get(tool!);
    if (chain === undefined) {
      const { middleware, names } = this.pipeline;
      chain = {
        middleware: [...middleware, ...own],
        names: [...names, ...own.map((entry, i) => (entry as { name?: string }).name || `${tool!.name}.chains.${this.kind}[${i}]`)],
      };
      this.byTool.set(tool!, chain);
    }
    return chain;
  }
}

/** One function of a tool's chain of kind `K`. */
type Entry<K extends keyof ToolChains> = NonNullable<ToolChains[K]>[number];
