import { ConfigError } from './errors.js';
import { GlobSet } from './glob.js';
import { brand } from './brand.js';

/**
 * One layer of tool restriction, set by one scope (the host, a preset, a subagent).
 * Patterns are globs over tool names: `*` any run of characters, `?` exactly one; see {@link RestrictionSet}.
 * `deny` patterns match regardless of case, `allow` patterns exactly.
 *
 * @example
 * ```ts
 * const host: RestrictionLayer = { scope: 'host', deny: ['bash', 'write_*'] };
 * const reviewer: RestrictionLayer = { scope: 'preset:reviewer', allow: ['write_comment'], deny: ['mcp__*'] };
 * ```
 */
export interface RestrictionLayer {
  /** Who set the layer, e.g. `'host'` or `'subagent:search'`; verdicts report it. */
  readonly scope: string;
  /**
   * Exemptions: a tool a farther layer denies is restored. Not an allowlist: unmentioned tools stay
   * allowed. Matched exactly, case included: an exemption restores only the names it spells.
   */
  readonly allow?: readonly string[];
  /**
   * Tools this layer hides and rejects. Within one layer, deny beats allow. Matched regardless of
   * case: `write_*` also hides `Write_File`.
   */
  readonly deny?: readonly string[];
}

/**
 * Why a tool is allowed or denied: the layer (`scope`) and the pattern that decided.
 * Both are absent when no layer mentions the tool, which is then allowed.
 *
 * @example
 * ```ts
 * const verdict = restrictions.resolve('bash');
 * if (!verdict.allowed) console.warn(`bash is denied by ${verdict.scope} (${verdict.pattern})`);
 * ```
 */
export type RestrictionVerdict = {
  readonly allowed: boolean;
  readonly scope?: string;
  readonly pattern?: string;
};

/** A layer as the set holds it: copied, frozen, with both lists present. */
type StoredLayer = Required<RestrictionLayer>;

interface CompiledLayer {
  readonly scope: string;
  readonly allow: GlobSet;
  readonly deny: GlobSet;
}

const UNMENTIONED: RestrictionVerdict = Object.freeze({ allowed: true });

/**
 * An immutable stack of restriction layers, host outermost, nearer scopes winning.
 *
 * To resolve a tool, scan from the nearest layer back to the host; the first layer that mentions the tool
 * (any of its allow or deny patterns matches) decides:
 * 1. it matches that layer's deny → denied (deny wins inside one layer);
 * 2. otherwise it matches that layer's allow → allowed;
 * 3. no layer mentions it → allowed.
 *
 * Deny patterns ignore case and allow patterns do not, so neither direction can be sidestepped by a
 * tool's spelling: a case variant of a denied name stays denied unless an exemption names it exactly.
 *
 * So a host deny plus a nearer allow restores the tool, a deny in both rejects it, and allow lists are
 * exemptions, never allowlists. `filter` hides tools from what the model is offered; the intake rejects
 * calls to hidden tools. A subagent's set {@link RestrictionSet.extend | extends} its parent's.
 *
 * @throws {ConfigError} when a layer or pattern is malformed; `option` names it, e.g.
 * `` RestrictionSet: `layers[1].deny[0]` must be a non-empty glob string; received 42 ``.
 *
 * @example
 * ```ts
 * const host = new RestrictionSet([{ scope: 'host', deny: ['bash', 'write_*'] }]);
 * const reviewer = host.extend({ scope: 'preset:reviewer', allow: ['write_comment'] });
 * reviewer.isAllowed('write_comment'); // true: the preset exempts it
 * reviewer.isAllowed('write_file'); // false: the host's deny stands
 * reviewer.resolve('read_file'); // { allowed: true }: nobody mentions it
 * ```
 */
export class RestrictionSet {
  static {
    brand(this, 'RestrictionSet');
  }

  /** The layers, host first, nearest last; copied and frozen. */
  readonly layers: readonly StoredLayer[];
  /** Nearest first: the order `resolve` scans in. */
  readonly #nearestFirst: readonly CompiledLayer[];

  constructor(layers: readonly RestrictionLayer[]) {
    if (!Array.isArray(layers)) throw new ConfigError('RestrictionSet', 'layers', 'an array of restriction layers', layers);
    this.layers = Object.freeze(Array.from(layers, (layer, i) => copyLayer(layer, 'RestrictionSet', `layers[${i}]`)));
    // The patterns were checked by copyLayer; the sources only name them, should a GlobSet ever refuse one.
    const source = (i: number, list: 'allow' | 'deny') => ({ where: 'RestrictionSet', option: `layers[${i}].${list}` }) as const;
    this.#nearestFirst = this.layers
      .map(({ scope, allow, deny }, i) => ({ scope, allow: new GlobSet(allow, source(i, 'allow')), deny: new GlobSet(deny, source(i, 'deny'), { ignoreCase: true }) }))
      .reverse();
  }

  /** Whether `name` may be offered and called, and which layer and pattern decided. */
  resolve(name: string): RestrictionVerdict {
    for (const { scope, allow, deny } of this.#nearestFirst) {
      const denied = deny.firstMatch(name);
      if (denied !== undefined) return { allowed: false, scope, pattern: denied };
      const allowed = allow.firstMatch(name);
      if (allowed !== undefined) return { allowed: true, scope, pattern: allowed };
    }
    return UNMENTIONED;
  }

  /** Whether `name` may be offered and called: `resolve(name).allowed`. */
  isAllowed(name: string): boolean {
    return this.resolve(name).allowed;
  }

  /** The allowed tools, in their original order: what the model is offered. */
  filter<T extends { readonly name: string }>(tools: readonly T[]): T[] {
    return tools.filter((tool) => this.isAllowed(tool.name));
  }

  /**
   * A child set with `layer` as its new nearest layer, e.g. for a subagent. This set is unchanged.
   *
   * @throws {ConfigError} when `layer` is malformed (`where` `'RestrictionSet.extend'`), e.g.
   *   `` RestrictionSet.extend: `layer.scope` must be a non-empty string; received "" ``.
   */
  extend(layer: RestrictionLayer): RestrictionSet {
    return new RestrictionSet([...this.layers, copyLayer(layer, 'RestrictionSet.extend', 'layer')]);
  }
}

/** Who checks a layer: the constructor or `extend`, as the user called it. */
type Where = 'RestrictionSet' | 'RestrictionSet.extend';

function copyLayer(layer: RestrictionLayer, where: Where, path: string): StoredLayer {
  if (typeof layer !== 'object' || layer === null) throw new ConfigError(where, path, 'an object with a scope', layer);
  const { scope, allow = [], deny = [] } = layer;
  if (typeof scope !== 'string' || scope === '') throw new ConfigError(where, `${path}.scope`, 'a non-empty string', scope);
  const [allowed, denied] = [copyPatterns(allow, where, `${path}.allow`), copyPatterns(deny, where, `${path}.deny`)];
  return Object.freeze({ scope, allow: allowed, deny: denied });
}

function copyPatterns(patterns: readonly string[], where: Where, path: string): readonly string[] {
  if (!Array.isArray(patterns)) throw new ConfigError(where, path, 'an array of glob strings', patterns);
  return Object.freeze(
    Array.from(patterns, (pattern, i) => {
      if (typeof pattern !== 'string' || pattern === '') throw new ConfigError(where, `${path}[${i}]`, 'a non-empty glob string', pattern);
      return pattern;
    }),
  );
}
