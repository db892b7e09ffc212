import { isRecord } from '../util/validate.js';
import { linearPatternCost } from './linearPattern.js';
import { escapePointer, localDefinition, SCHEMA_KEYWORDS, SCHEMA_MAPS } from './schemaKeywords.js';

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
  for (let round = 0; ; round++) {
    const nodes = graph.reachable();
    const evaluations = graph.peaks(nodes, limits.maxDepth, 'evaluations');
    const patternSteps = graph.peaks(nodes, limits.maxDepth, 'patternSteps');
    const factors = { evaluations: evaluations[0]!, patternSteps: patternSteps[0]! }; // the root is node 0
    const over = factors.evaluations > limits.maxFactor ? 'evaluations' : factors.patternSteps > limits.maxFactor ? 'patternSteps' : undefined;
    if (over === undefined) return { dropped, factors };
    // Each round costs a pass over the schema: past a few, what multiplies goes at once (then
    // every reference), so that a schema built of many amplifiers cannot make the listing slow.
    const culprits =
      round < MAX_ROUNDS
        ? [graph.culprit(nodes, over === 'evaluations' ? evaluations : patternSteps, over)].filter((culprit) => culprit !== undefined)
        : graph.everything(nodes, round > MAX_ROUNDS);
    if (culprits.length === 0) return { dropped, factors }; // nothing left to drop
    for (const { node, keyword } of culprits) dropped.push(...graph.drop(node, keyword));
  }
}

/** Single drops, each the costliest, before what multiplies is dropped wholesale. */
const MAX_ROUNDS = 8;

const COMPOSITIONS = ['anyOf', 'oneOf', 'allOf'] as const;

/** The nodes (by index) evaluated on one kind of child value, and the cost of what else runs on it. */
interface ChildClass {
  readonly members: Int32Array;
  readonly extra: number;
}

/** What a node leads to and costs, read once (again after a keyword of it is dropped). */
interface Edges {
  readonly sameValue: Int32Array;
  readonly classes: Readonly<Record<Kind, readonly ChildClass[]>>;
  readonly self: Readonly<Record<Kind, number>>;
}

/** A drop: `keyword` of the node at index `node`. */
interface Culprit {
  readonly node: number;
  readonly keyword: string;
}

/** The subschemas of a root, by index (the root is 0), with what each leads to. */
class SchemaGraph {
  private readonly nodes: Record<string, unknown>[] = [];
  private readonly pointers: string[] = [];
  private readonly index = new Map<Record<string, unknown>, number>();
  private readonly edges: (Edges | undefined)[] = [];
  private readonly defs: Record<string, unknown> | undefined;

  constructor(private readonly root: Record<string, unknown>) {
    this.defs = isRecord(root['$defs']) ? root['$defs'] : isRecord(root['definitions']) ? root['definitions'] : undefined;
    this.collect(root, '');
  }

  private collect(schema: unknown, pointer: string): void {
    if (!isRecord(schema) || this.index.has(schema)) return;
    this.index.set(schema, this.nodes.push(schema) - 1);
    this.pointers.push(pointer);
    for (const [key, value] of Object.entries(schema)) {
      const at = `${pointer}/${escapePointer(key)}`;
      if (SCHEMA_KEYWORDS.has(key)) {
        if (Array.isArray(value)) value.forEach((item, i) => this.collect(item, `${at}/${i}`));
        else this.collect(value, at);
      } else if (SCHEMA_MAPS.has(key) && isRecord(value)) for (const [name, sub] of Object.entries(value)) this.collect(sub, `${at}/${escapePointer(name)}`);
    }
  }

  /** The index of the subschema a local `$ref` of node `i` points to, or -1. */
  private target(i: number): number {
    const ref = this.nodes[i]!['$ref'];
    if (typeof ref !== 'string') return -1;
    if (ref === '#') return 0;
    const name = localDefinition(ref)?.name;
    const target = name === undefined ? undefined : this.defs?.[name];
    return isRecord(target) ? (this.index.get(target) ?? -1) : -1;
  }

  private edgesOf(i: number): Edges {
    let edges = this.edges[i];
    if (edges === undefined) {
      const schema = this.nodes[i]!;
      edges = {
        sameValue: this.sameValueOf(i),
        classes: { evaluations: this.classesOf(schema, 'evaluations'), patternSteps: this.classesOf(schema, 'patternSteps') },
        self: { evaluations: selfCost(schema, 'evaluations'), patternSteps: selfCost(schema, 'patternSteps') },
      };
      this.edges[i] = edges;
    }
    return edges;
  }

  /** The nodes evaluated on the same value as node `i`: its `$ref` target, the members of its compositions. */
  private sameValueOf(i: number): Int32Array {
    const out: number[] = [];
    const target = this.target(i);
    if (target !== -1) out.push(target);
    for (const keyword of COMPOSITIONS) {
      const members = this.nodes[i]![keyword];
      if (Array.isArray(members)) for (const member of members) if (isRecord(member)) out.push(this.index.get(member)!);
    }
    return Int32Array.from(out);
  }

  /**
   * For each kind of child value (a named property, other keys, key names, an item): the nodes
   * evaluated on it, and the cost of what else is run on it (each key is tested against every
   * `patternProperties` expression, twice with `additionalProperties: false`).
   */
  private classesOf(schema: Record<string, unknown>, kind: Kind): ChildClass[] {
    const at = (value: unknown): number[] => (isRecord(value) ? [this.index.get(value)!] : []);
    const patternProperties = isRecord(schema['patternProperties']) ? schema['patternProperties'] : {};
    const patterns = Object.values(patternProperties).flatMap(at);
    const perKey = Object.keys(patternProperties).reduce((sum, key) => sum + (kind === 'evaluations' ? 1 : (linearPatternCost(key) ?? 0)), 0);
    const keyTests = perKey * (schema['additionalProperties'] === false ? 2 : 1);
    const classes: ChildClass[] = [];
    const add = (members: number[], extra = 0) => classes.push({ members: Int32Array.from(members), extra });
    if (isRecord(schema['properties'])) for (const value of Object.values(schema['properties'])) add([...at(value), ...patterns]);
    add([...at(schema['additionalProperties']), ...patterns]);
    add(at(schema['propertyNames']), keyTests);
    const contains = at(schema['contains']);
    const positional = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : Array.isArray(schema['items']) ? schema['items'] : [];
    for (const item of positional) add([...at(item), ...contains]);
    add([...at(Array.isArray(schema['items']) ? schema['additionalItems'] : schema['items']), ...contains]);
    return classes;
  }

  /**
   * A node whose `$ref` closes a cycle of same-value edges (zod would recurse on one value without
   * end), or `undefined`. Every such cycle holds a `$ref`: the other edges lead into nested objects.
   */
  sameValueCycle(): number | undefined {
    const state = new Uint8Array(this.nodes.length); // 0 new, 1 open, 2 done
    const path: number[] = [];
    const visit = (i: number): number | undefined => {
      state[i] = 1;
      path.push(i);
      for (const next of this.edgesOf(i).sameValue) {
        if (state[next] === 1) {
          const cycle = [...path.slice(path.indexOf(next)), next];
          // The edge out of a node is its `$ref` when the next node of the cycle is that reference's target.
          for (let k = cycle.length - 2; k >= 0; k--) if (this.target(cycle[k]!) === cycle[k + 1]) return cycle[k];
        }
        if (state[next] === 0) {
          const found = visit(next);
          if (found !== undefined) return found;
        }
      }
      path.pop();
      state[i] = 2;
      return undefined;
    };
    for (const i of this.reachable()) {
      if (state[i] !== 0) continue;
      const found = visit(i);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** The nodes zod compiles: those the root reaches (a definition nothing refers to is never run). */
  reachable(): Int32Array {
    const seen = new Uint8Array(this.nodes.length);
    const order = [0];
    seen[0] = 1;
    for (let k = 0; k < order.length; k++) {
      const { sameValue, classes } = this.edgesOf(order[k]!);
      const visit = (next: number) => {
        if (seen[next] === 0) {
          seen[next] = 1;
          order.push(next);
        }
      };
      sameValue.forEach(visit);
      for (const { members } of classes.evaluations) members.forEach(visit);
    }
    return Int32Array.from(order);
  }

  /**
   * The factor of every node (by index; 0 for the nodes not in `nodes`): the most it costs a value at
   * any depth from 0 to `maxDepth`. Computed level by level; stops early once a level repeats the one
   * before (every later level would repeat it too).
   */
  peaks(nodes: Int32Array, maxDepth: number, kind: Kind): Float64Array {
    const peak = new Float64Array(this.nodes.length);
    let below: Float64Array | undefined;
    for (let depth = 0; depth <= maxDepth; depth++) {
      const level = new Float64Array(this.nodes.length).fill(-1); // -1: not computed yet
      const factor = (i: number): number => {
        if (level[i]! >= 0) return level[i]!;
        level[i] = 0; // same-value cycles were dropped; this only guards against a miss
        const edges = this.edgesOf(i);
        let own = 0;
        if (below === undefined) own = edges.self[kind];
        else {
          for (const { members, extra } of edges.classes[kind]) {
            let sum = extra;
            for (const member of members) sum += Math.max(0, below[member]!);
            if (sum > own) own = sum;
          }
        }
        for (const member of edges.sameValue) own += factor(member);
        return (level[i] = Math.min(own, SATURATED));
      };
      let repeats = below !== undefined;
      for (const i of nodes) {
        const value = factor(i);
        if (value > peak[i]!) peak[i] = value;
        if (repeats && value !== below![i]) repeats = false;
      }
      if (repeats) break;
      below = level;
    }
    return peak;
  }

  /**
   * The keyword to drop next: the composition (or `contains`, `patternProperties`, and by kind a
   * `pattern` or a mixed `enum`) that adds the most beyond its single most expensive part; then whole
   * compositions; a `$ref` only when nothing else adds anything.
   */
  culprit(nodes: Int32Array, peaks: Float64Array, kind: Kind): Culprit | undefined {
    const peak = (schema: unknown) => (isRecord(schema) ? peaks[this.index.get(schema)!]! : 0);
    let best: (Culprit & { blame: number }) | undefined;
    const consider = (node: number, keyword: string, blame: number) => {
      if (blame > 0 && (best === undefined || blame > best.blame)) best = { node, keyword, blame };
    };
    for (const i of nodes) {
      const schema = this.nodes[i]!;
      for (const keyword of COMPOSITIONS) {
        const costs = Array.isArray(schema[keyword]) ? schema[keyword].map(peak) : [];
        if (costs.length > 0) consider(i, keyword, costs.reduce((a, b) => a + b, 0) - Math.max(...costs));
      }
      consider(i, 'contains', peak(schema['contains']));
      if (isRecord(schema['patternProperties'])) {
        consider(i, 'patternProperties', Object.values(schema['patternProperties']).reduce<number>((sum, value) => sum + peak(value), 0) + 1);
      }
      if (kind === 'patternSteps' && typeof schema['pattern'] === 'string') consider(i, 'pattern', linearPatternCost(schema['pattern']) ?? 0);
      if (kind === 'evaluations') consider(i, 'enum', Math.floor(mixedEnum(schema) / 2));
    }
    if (best !== undefined) return best;
    for (const i of nodes) {
      const schema = this.nodes[i]!;
      for (const keyword of COMPOSITIONS) if (Array.isArray(schema[keyword])) consider(i, keyword, schema[keyword].reduce<number>((sum, member) => sum + peak(member), 0));
    }
    if (best !== undefined) return best;
    for (const i of nodes) if (this.target(i) !== -1) consider(i, '$ref', peaks[this.target(i)]!);
    return best;
  }

  /** Every keyword that multiplies (or, with `references`, every `$ref`) of `nodes`, to drop at once. */
  everything(nodes: Int32Array, references: boolean): Culprit[] {
    const keywords = references ? ['$ref'] : [...COMPOSITIONS, 'contains', 'patternProperties'];
    const out: Culprit[] = [];
    for (const i of nodes) {
      const schema = this.nodes[i]!;
      for (const keyword of keywords) if (keyword in schema) out.push({ node: i, keyword });
      if (!references && mixedEnum(schema) > 1) out.push({ node: i, keyword: 'enum' });
      if (!references && typeof schema['pattern'] === 'string' && (linearPatternCost(schema['pattern']) ?? 0) > 1) out.push({ node: i, keyword: 'pattern' });
    }
    return out;
  }

  /** Deletes `keyword` from node `i` (and an `additionalProperties` that would now reject keys), returning the pointers. */
  drop(i: number, keyword: string): string[] {
    const node = this.nodes[i]!;
    delete node[keyword];
    this.edges[i] = undefined;
    const dropped = [`${this.pointers[i]}/${escapePointer(keyword)}`];
    if (keyword === 'patternProperties' && 'additionalProperties' in node) {
      delete node['additionalProperties'];
      dropped.push(`${this.pointers[i]}/additionalProperties`);
    }
    return dropped;
  }
}

/**
 * What evaluating `schema` itself on one value costs. In evaluations: one, plus what zod does per
 * value beyond a constant (it walks every declared property of an object schema, and tries every
 * value of an `enum` that is not all strings, building an issue for each on failure): calibrated on
 * zod 4.6, about 16 properties, or 2 enum values, cost one evaluation. In pattern steps: its
 * `pattern`'s cost per character.
 */
function selfCost(schema: Record<string, unknown>, kind: Kind): number {
  const pattern = schema['pattern'];
  if (kind === 'patternSteps') return typeof pattern === 'string' ? (linearPatternCost(pattern) ?? 0) : 0;
  const properties = isRecord(schema['properties']) ? Object.keys(schema['properties']).length : 0;
  return 1 + Math.floor(properties / 16) + Math.floor(mixedEnum(schema) / 2);
}

/** The number of values of an `enum` that zod checks one by one (one that is not all strings). */
function mixedEnum(schema: Record<string, unknown>): number {
  const values = schema['enum'];
  return Array.isArray(values) && !values.every((value) => typeof value === 'string') ? values.length : 0;
}

