import { isRecord } from '../internal/validate.js';
import { linearPatternCost } from './linearPattern.js';

/**
 * The validation cost of a (relaxed) JSON Schema as zod runs it, and the relaxations that bound it.
 *
 * zod evaluates every applicable subschema on a value: each member of `anyOf` (until one passes),
 * `oneOf` (always all) and `allOf`, `contains` beside `items`, every `patternProperties` entry a key
 * matches. Through shared or recursive `$ref`s this multiplies: `A0: anyOf [A1, A1]`, `A1: anyOf
 * [A2, A2]`, … makes a schema of a few hundred bytes evaluate one value 2^n times, and zod memoises
 * only recursive containers, never unions. A schema with `{ anyOf: [{ $ref: '#' }] }` even recurses
 * on one value without end.
 *
 * The cost model has two **factors**, each the most any one value at any depth (up to the depth
 * bound) can cost, computed over the schema graph with references followed and every applicable
 * subschema picking its own worst key (an upper bound):
 * - `evaluations`: schema evaluations per value, each weighted by what zod does per value beyond a
 *   constant (it walks an object schema's declared properties, tries each value of an `enum` that is
 *   not all strings, tests each key against each `patternProperties` entry); the work on the values
 *   of arguments is at most their number × this factor;
 * - `patternSteps`: search steps per character of a string or key ({@link linearPatternCost} of each
 *   pattern applied to it); the work on strings is at most their total length × this factor.
 */

/** The two factors of a schema; see the module comment. */
export interface CostFactors {
  readonly evaluations: number;
  readonly patternSteps: number;
}

type Kind = keyof CostFactors;

interface Node {
  readonly schema: Record<string, unknown>;
  readonly pointer: string;
}

/** Factors are counted up to this, so that sums never overflow. */
const SATURATED = 1e12;

/**
 * Drops keywords from `root` (in place) until both its factors are at most `maxFactor` for values up
 * to `maxDepth` deep; returns the JSON Pointers of what it dropped and the factors left. A `$ref` that
 * leads back to the same value without descending (an endless recursion) is always dropped. Each drop
 * only widens what the schema accepts: a whole `anyOf`/`oneOf` (never one member), an `allOf`, a
 * `contains`, a `patternProperties` (with an `additionalProperties` beside it), a `pattern`, an `enum`
 * that is not all strings, and as a last resort a `$ref`. What may stay over the bound after that is
 * the cost of plain object schemas with thousands of properties (bounded by the schema's own size).
 *
 * @example
 * ```ts
 * boundCost(relaxedSchema, { maxDepth: 64, maxFactor: 256 }); // { dropped: ['/$defs/A0/anyOf'], factors: { evaluations: 3, patternSteps: 1 } }
 * ```
 */
export function boundCost(
  root: Record<string, unknown>,
  limits: { readonly maxDepth: number; readonly maxFactor: number },
): { dropped: string[]; factors: CostFactors } {
  const dropped: string[] = [];
  const graph = new SchemaGraph(root);
  for (let cycle = graph.sameValueCycle(); cycle !== undefined; cycle = graph.sameValueCycle()) dropped.push(...graph.drop(cycle, '$ref'));
  for (;;) {
    const evaluations = graph.levels(limits.maxDepth, 'evaluations');
    const patternSteps = graph.levels(limits.maxDepth, 'patternSteps');
    const factors = { evaluations: graph.worst(evaluations), patternSteps: graph.worst(patternSteps) };
    const over = factors.evaluations > limits.maxFactor ? 'evaluations' : factors.patternSteps > limits.maxFactor ? 'patternSteps' : undefined;
    const culprit = over === undefined ? undefined : graph.culprit(over === 'evaluations' ? evaluations : patternSteps, over);
    if (culprit === undefined) return { dropped, factors }; // within the bound, or nothing left to drop
    dropped.push(...graph.drop(culprit.node, culprit.keyword));
  }
}

const COMPOSITIONS = ['anyOf', 'oneOf', 'allOf'] as const;

class SchemaGraph {
  readonly nodes: Node[] = [];
  private readonly defs: Record<string, unknown> | undefined;

  constructor(private readonly root: Record<string, unknown>) {
    this.defs = isRecord(root['$defs']) ? root['$defs'] : isRecord(root['definitions']) ? root['definitions'] : undefined;
    this.collect(root, '');
  }

  private collect(schema: unknown, pointer: string): void {
    if (!isRecord(schema)) return;
    this.nodes.push({ schema, pointer });
    for (const [key, value] of Object.entries(schema)) {
      const at = `${pointer}/${escape(key)}`;
      if (Array.isArray(value) && ARRAY_KEYWORDS.has(key)) value.forEach((item, i) => this.collect(item, `${at}/${i}`));
      else if (MAP_KEYWORDS.has(key) && isRecord(value)) for (const [name, sub] of Object.entries(value)) this.collect(sub, `${at}/${escape(name)}`);
      else if (SCHEMA_KEYWORDS.has(key)) this.collect(value, at);
    }
  }

  /** The subschema a local `$ref` points to. */
  private target(schema: Record<string, unknown>): Record<string, unknown> | undefined {
    const ref = schema['$ref'];
    if (typeof ref !== 'string') return undefined;
    if (ref === '#') return this.root;
    const name = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(ref)?.[1];
    const target = name === undefined ? undefined : this.defs?.[name.replace(/~1/g, '/').replace(/~0/g, '~')];
    return isRecord(target) ? target : undefined;
  }

  /** Subschemas evaluated on the same value as `schema`. */
  private sameValue(schema: Record<string, unknown>): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    const target = this.target(schema);
    if (target !== undefined) out.push(target);
    for (const keyword of COMPOSITIONS) {
      const members = schema[keyword];
      if (Array.isArray(members)) for (const member of members) if (isRecord(member)) out.push(member);
    }
    return out;
  }

  /**
   * For each kind of child value (a named property, other keys, key names, an item): the subschemas
   * evaluated on it, and the cost of what else is run on it (each key is tested against every
   * `patternProperties` expression, twice with `additionalProperties: false`).
   */
  private childClasses(schema: Record<string, unknown>, kind: Kind): { members: Record<string, unknown>[]; extra: number }[] {
    const schemas = (value: unknown): Record<string, unknown>[] => (isRecord(value) ? [value] : []);
    const patternProperties = isRecord(schema['patternProperties']) ? schema['patternProperties'] : {};
    const patterns = Object.values(patternProperties).filter(isRecord);
    const perKey = Object.keys(patternProperties).reduce((sum, key) => sum + (kind === 'evaluations' ? 1 : (linearPatternCost(key) ?? 0)), 0);
    const keyTests = perKey * (schema['additionalProperties'] === false ? 2 : 1);
    const classes: { members: Record<string, unknown>[]; extra: number }[] = [];
    if (isRecord(schema['properties'])) for (const value of Object.values(schema['properties'])) classes.push({ members: [...schemas(value), ...patterns], extra: 0 });
    classes.push({ members: [...schemas(schema['additionalProperties']), ...patterns], extra: 0 });
    classes.push({ members: schemas(schema['propertyNames']), extra: keyTests });
    const contains = schemas(schema['contains']);
    const positional = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : Array.isArray(schema['items']) ? schema['items'] : [];
    for (const item of positional) classes.push({ members: [...schemas(item), ...contains], extra: 0 });
    const rest = Array.isArray(schema['items']) ? schema['additionalItems'] : schema['items'];
    classes.push({ members: [...schemas(rest), ...contains], extra: 0 });
    return classes;
  }

  /**
   * What evaluating `schema` itself on one value costs. In evaluations: one, plus what zod does per
   * value beyond a constant (it walks every declared property of an object schema, and tries every
   * value of an `enum` that is not all strings, building an issue for each on failure): calibrated on
   * zod 4.6, about 16 properties, or 2 enum values, cost one evaluation. In pattern steps: its
   * `pattern`'s cost per character.
   */
  private selfCost(schema: Record<string, unknown>, kind: Kind): number {
    const pattern = schema['pattern'];
    if (kind === 'patternSteps') return typeof pattern === 'string' ? (linearPatternCost(pattern) ?? 0) : 0;
    const properties = isRecord(schema['properties']) ? Object.keys(schema['properties']).length : 0;
    return 1 + Math.floor(properties / 16) + Math.floor(mixedEnum(schema) / 2);
  }

  /**
   * A node whose `$ref` closes a cycle of same-value edges (zod would recurse on one value without
   * end), or `undefined`. Every such cycle holds a `$ref`: the other edges lead into nested objects.
   */
  sameValueCycle(): Record<string, unknown> | undefined {
    const state = new Map<Record<string, unknown>, 'open' | 'done'>();
    const path: Record<string, unknown>[] = [];
    const visit = (schema: Record<string, unknown>): Record<string, unknown> | undefined => {
      state.set(schema, 'open');
      path.push(schema);
      for (const next of this.sameValue(schema)) {
        if (state.get(next) === 'open') {
          const cycle = [...path.slice(path.indexOf(next)), next];
          // The edge out of a node is its `$ref` when the next node of the cycle is that reference's target.
          for (let i = cycle.length - 2; i >= 0; i--) if (this.target(cycle[i]!) === cycle[i + 1]) return cycle[i];
        }
        if (state.get(next) === undefined) {
          const found = visit(next);
          if (found !== undefined) return found;
        }
      }
      path.pop();
      state.set(schema, 'done');
      return undefined;
    };
    for (const { schema } of this.nodes) {
      if (state.get(schema) !== undefined) continue;
      const found = visit(schema);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** The factor of every node, for values at each depth from 0 to `maxDepth`: `levels[k].get(node)`. */
  levels(maxDepth: number, kind: Kind): Map<Record<string, unknown>, number>[] {
    const levels: Map<Record<string, unknown>, number>[] = [];
    for (let depth = 0; depth <= maxDepth; depth++) {
      const below = levels[depth - 1];
      const level = new Map<Record<string, unknown>, number>();
      const factor = (schema: Record<string, unknown>): number => {
        const known = level.get(schema);
        if (known !== undefined) return known;
        level.set(schema, 0); // same-value cycles were dropped; this only guards against a miss
        let own =
          below === undefined
            ? this.selfCost(schema, kind)
            : Math.max(0, ...this.childClasses(schema, kind).map(({ members, extra }) => members.reduce((sum, member) => sum + (below.get(member) ?? 0), extra)));
        for (const member of this.sameValue(schema)) own += factor(member);
        const value = Math.min(own, SATURATED);
        level.set(schema, value);
        return value;
      };
      for (const { schema } of this.nodes) factor(schema);
      levels.push(level);
    }
    return levels;
  }

  worst(levels: readonly Map<Record<string, unknown>, number>[]): number {
    return Math.max(...levels.map((level) => level.get(this.root) ?? 0));
  }

  /**
   * The keyword to drop next: the composition (or `contains`, `patternProperties`, and by kind a
   * `pattern` or a mixed `enum`) that adds the most beyond its single most expensive part; then whole
   * compositions; a `$ref` only when nothing else adds anything.
   */
  culprit(levels: readonly Map<Record<string, unknown>, number>[], kind: Kind): { node: Record<string, unknown>; keyword: string } | undefined {
    const peak = (schema: unknown) => (isRecord(schema) ? Math.max(...levels.map((level) => level.get(schema) ?? 0)) : 0);
    let best: { node: Record<string, unknown>; keyword: string; blame: number } | undefined;
    const consider = (node: Record<string, unknown>, keyword: string, blame: number) => {
      if (blame > 0 && (best === undefined || blame > best.blame)) best = { node, keyword, blame };
    };
    for (const { schema } of this.nodes) {
      for (const keyword of COMPOSITIONS) {
        const costs = Array.isArray(schema[keyword]) ? schema[keyword].map(peak) : [];
        if (costs.length > 0) consider(schema, keyword, costs.reduce((a, b) => a + b, 0) - Math.max(...costs));
      }
      consider(schema, 'contains', peak(schema['contains']));
      if (isRecord(schema['patternProperties'])) {
        consider(schema, 'patternProperties', Object.values(schema['patternProperties']).reduce<number>((sum, value) => sum + peak(value), 0) + 1);
      }
      if (kind === 'patternSteps' && typeof schema['pattern'] === 'string') consider(schema, 'pattern', linearPatternCost(schema['pattern']) ?? 0);
      if (kind === 'evaluations') consider(schema, 'enum', Math.floor(mixedEnum(schema) / 2));
    }
    if (best !== undefined) return best;
    for (const { schema } of this.nodes) {
      for (const keyword of COMPOSITIONS) if (Array.isArray(schema[keyword])) consider(schema, keyword, schema[keyword].reduce<number>((sum, member) => sum + peak(member), 0));
    }
    if (best !== undefined) return best;
    for (const { schema } of this.nodes) if (this.target(schema) !== undefined) consider(schema, '$ref', peak(this.target(schema)));
    return best;
  }

  /** Deletes `keyword` from `node` (and an `additionalProperties` that would now reject keys), returning the pointers. */
  drop(node: Record<string, unknown>, keyword: string): string[] {
    const pointer = this.nodes.find((entry) => entry.schema === node)!.pointer;
    delete node[keyword];
    const dropped = [`${pointer}/${escape(keyword)}`];
    if (keyword === 'patternProperties' && 'additionalProperties' in node) {
      delete node['additionalProperties'];
      dropped.push(`${pointer}/additionalProperties`);
    }
    return dropped;
  }
}

/** The number of values of an `enum` that zod checks one by one (one that is not all strings). */
function mixedEnum(schema: Record<string, unknown>): number {
  const values = schema['enum'];
  return Array.isArray(values) && !values.every((value) => typeof value === 'string') ? values.length : 0;
}

const ARRAY_KEYWORDS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items']);
const SCHEMA_KEYWORDS = new Set(['items', 'additionalItems', 'additionalProperties', 'contains', 'propertyNames']);
const MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
