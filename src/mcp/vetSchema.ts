import * as z from 'zod';
import { isObject, isRecord } from '../util/validate.js';
import { isLinearPattern } from './linearPattern.js';
import { boundCost } from './schemaCost.js';
import { escapePointer, localDefinition, SCHEMA_KEYWORDS, SCHEMA_MAPS } from './schemaKeywords.js';

/**
 * The vetting a server's JSON Schema goes through before toolstream checks values against it, shared
 * by the input schemas (`inputSchema.ts`) and the output schemas (`outputSchema.ts`) of MCP tools:
 * relax what zod cannot check faithfully or in linear time, bound the cost of what is left, and
 * divide the value limits by that cost.
 */

/** A JSON Schema object as an MCP server lists it. */
export type JsonSchemaObject = Readonly<Record<string, unknown>>;

/**
 * How large and deep a value checked against a compiled schema may be (the arguments of a call, or the
 * structured content of its result). The first two are budgets: for a schema that costs more than one
 * evaluation per value, or more than one search step per character, they are divided by that cost
 * (see `boundCost`).
 */
export interface ArgsLimits {
  /** The most characters the value's strings and keys may have in all. */
  readonly maxArgsLength: number;
  /** The most values (objects, arrays, strings, numbers, booleans, nulls) the value may hold. */
  readonly maxArgsValues: number;
  /** The deepest a value may be nested (the checked object itself is at depth 0). */
  readonly maxArgsDepth: number;
}

/** Beyond this factor a schema is relaxed rather than limited: it would accept almost nothing. */
const MAX_FACTOR = 256;

/** Assertion keywords `z.fromJSONSchema` cannot express; dropping them only widens the accepted set. */
const UNSUPPORTED = new Set([
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependentRequired',
  'unevaluatedItems',
  'unevaluatedProperties',
]);

export const JSON_TYPES: ReadonlySet<string> = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);

/** A schema as zod checks it after vetting; see {@link vetSchema}. */
export interface VettedSchema {
  /** zod's validator of the relaxed schema (it may transform: use it to check, never for the value). */
  readonly validator: z.ZodType;
  /** JSON Pointers of the assertions that are not checked (each only widens what is accepted). */
  readonly relaxed: readonly string[];
  /** The caller's limits, divided by the schema's cost per value and per character when it is more than one. */
  readonly limits: ArgsLimits;
}

/**
 * Relaxes `schema` so that zod checks it in bounded time and never rejects a value the schema accepts,
 * bounds its cost, and compiles it with `z.fromJSONSchema` (zod ≥ 4.2). What is relaxed:
 * - `format` (an annotation in JSON Schema 2020-12; zod's formats are stricter), not reported;
 * - `not`, `if`/`then`/`else`, `dependentSchemas`, `dependentRequired`, `unevaluated*`, a `$ref` that is
 *   not local, an `enum`/`const` with object or array values (zod compares those by identity), a
 *   `pattern` JavaScript cannot compile as JSON Schema means it or that could take more than linear
 *   time ({@link isLinearPattern}), an unknown `type`;
 * - compositions whose evaluations would multiply past a factor of 256 (see `boundCost`).
 *
 * @throws {Error} when zod cannot compile the schema even so.
 *
 * @example
 * ```ts
 * const { validator, relaxed } = vetSchema({ type: 'object', properties: { slug: { type: 'string', pattern: '^([a-z]+)+$' } } }, DEFAULT_ARGS_LIMITS);
 * relaxed; // ['/properties/slug/pattern']
 * ```
 */
export function vetSchema(schema: JsonSchemaObject, limits: ArgsLimits): VettedSchema {
  const fromJSONSchema = (z as { fromJSONSchema?: typeof z.fromJSONSchema }).fromJSONSchema;
  if (typeof fromJSONSchema !== 'function') {
    throw new Error('toolstream/mcp needs zod 4.2 or later (z.fromJSONSchema) to validate MCP tool schemas');
  }
  const defsKey = isRecord(schema['$defs']) ? '$defs' : 'definitions';
  const relaxer = new Relaxer(schema, defsKey);
  const { $schema: _ignored, ...relaxed } = relaxer.relax(schema, '') as Record<string, unknown>;
  const cost = boundCost(relaxed, { maxDepth: limits.maxArgsDepth, maxFactor: MAX_FACTOR });
  relaxer.dropped.push(...cost.dropped);
  const effective: ArgsLimits = {
    maxArgsLength: Math.max(1, Math.floor(limits.maxArgsLength / Math.max(1, cost.factors.patternSteps))),
    maxArgsValues: Math.max(1, Math.floor(limits.maxArgsValues / cost.factors.evaluations)),
    maxArgsDepth: limits.maxArgsDepth,
  };
  // References were normalised to one definitions keyword; the target decides which one zod resolves.
  const target = defsKey === '$defs' ? 'draft-2020-12' : 'draft-7';
  const validator = fromJSONSchema(relaxed, { defaultTarget: target, registry: z.registry() });
  return { validator, relaxed: relaxer.dropped, limits: effective };
}

class Relaxer {
  readonly dropped: string[] = [];

  constructor(
    private readonly root: JsonSchemaObject,
    private readonly defsKey: '$defs' | 'definitions',
  ) {}

  relax(node: unknown, pointer: string): unknown {
    if (!isRecord(node)) return node; // boolean schemas, and malformed values zod will reject or ignore
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${escapePointer(key)}`;
      if (key === 'format') continue; // an annotation; not reported (see vetSchema)
      if (UNSUPPORTED.has(key) || !this.keeps(key, value)) {
        this.dropped.push(at);
        continue;
      }
      let kept: unknown = value;
      if (key === '$ref') kept = this.localRef(value as string);
      else if (key === 'type') kept = knownTypes(value);
      else if (SCHEMA_KEYWORDS.has(key)) {
        kept = Array.isArray(value) ? value.map((item, i) => this.relax(item, `${at}/${i}`)) : this.relax(value, at);
      } else if (SCHEMA_MAPS.has(key) && isRecord(value)) {
        kept = this.relaxMap(key, value, at);
      }
      defineValue(out, key, kept);
    }
    // A patternProperties entry was dropped: an additionalProperties beside it would now reject the keys
    // that entry matched, so it goes too.
    if (isRecord(node['patternProperties']) && isRecord(out['patternProperties']) && 'additionalProperties' in out) {
      const before = Object.keys(node['patternProperties']).length;
      if (Object.keys(out['patternProperties']).length < before) {
        delete out['additionalProperties'];
        this.dropped.push(`${pointer}/additionalProperties`);
      }
    }
    return out;
  }

  private relaxMap(key: string, map: Readonly<Record<string, unknown>>, at: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(map)) {
      if (key === 'patternProperties' && !checkable(name)) {
        this.dropped.push(`${at}/${escapePointer(name)}`);
        continue;
      }
      defineValue(out, name, this.relax(schema, `${at}/${escapePointer(name)}`));
    }
    return out;
  }

  /** Whether a keyword's value is one zod handles as JSON Schema means it. */
  private keeps(key: string, value: unknown): boolean {
    switch (key) {
      case '$ref':
        return typeof value === 'string' && this.localRef(value) !== undefined;
      case 'enum':
        return !Array.isArray(value) || !value.some(isObject);
      case 'const':
        return !isObject(value);
      case 'pattern':
        return typeof value !== 'string' || checkable(value);
      case 'type':
        return knownTypes(value) !== undefined;
      default:
        return true;
    }
  }

  /** `#`, or a definition of the root that exists, rewritten to the definitions keyword in use. */
  private localRef(ref: string): string | undefined {
    if (ref === '#') return ref;
    const definition = localDefinition(ref);
    if (definition === undefined) return undefined;
    const defs = this.root[definition.keyword];
    if (!isRecord(defs) || !Object.hasOwn(defs, definition.name)) return undefined;
    return definition.keyword === this.defsKey ? ref : undefined;
  }
}

/**
 * A `type` with the names zod does not know removed, and each name once (zod validates every entry of
 * a type list as a schema of its own: `['object', 'object']` would check each value twice); `undefined`
 * when nothing is left.
 */
function knownTypes(value: unknown): unknown {
  if (typeof value === 'string') return JSON_TYPES.has(value) ? value : undefined;
  if (!Array.isArray(value)) return undefined;
  const known = [...new Set(value.filter((type) => typeof type === 'string' && JSON_TYPES.has(type)))];
  return known.length === 0 ? undefined : known;
}

/** Whether zod may check `pattern`: it compiles as JSON Schema means it, and tests in linear time. */
function checkable(pattern: string): boolean {
  return compiles(pattern) && isLinearPattern(pattern);
}

/**
 * Whether zod (which compiles patterns without the `u` flag) checks `pattern` as JSON Schema means it:
 * it must compile, and hold none of the syntax that only means the same with `u` (`\p{…}`, `\P{…}`,
 * `\u{…}`) — without `u`, `^\p{L}+$` matches the text "p{L}" and would reject every real letter.
 */
function compiles(pattern: string): boolean {
  if (/\\[pP]\{|\\u\{/.test(pattern)) return false;
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** Which limit a value is beyond, and that limit. */
export type Excess = { readonly limit: 'depth' | 'values' | 'length'; readonly max: number };

/**
 * The first limit `value` is beyond, or `undefined`. Counts a value when it is reached, before walking
 * it, and stops at the first excess: even a huge value costs little. Anything but an object is within.
 */
export function exceedsLimits(value: unknown, { maxArgsLength, maxArgsValues, maxArgsDepth }: ArgsLimits): Excess | undefined {
  if (!isObject(value)) return undefined;
  let values = 1;
  let length = 0;
  const stack: [Record<string, unknown>, number][] = [[value, 0]];
  const reach = (child: unknown, key: string, depth: number): Excess | undefined => {
    if (depth > maxArgsDepth) return { limit: 'depth', max: maxArgsDepth };
    if (++values > maxArgsValues) return { limit: 'values', max: maxArgsValues };
    length += key.length + (typeof child === 'string' ? child.length : 0);
    if (length > maxArgsLength) return { limit: 'length', max: maxArgsLength };
    if (isObject(child)) stack.push([child, depth]);
    return undefined;
  };
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    let excess: Excess | undefined;
    if (Array.isArray(item)) for (let i = 0; i < item.length && excess === undefined; i++) excess = reach(item[i], '', depth + 1);
    else for (const key of Object.keys(item)) if ((excess = reach(item[key], key, depth + 1)) !== undefined) break;
    if (excess !== undefined) return excess;
  }
  return undefined;
}

/** Sets an own property, even one named `__proto__`. */
export function defineValue(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
