import * as z from 'zod';
import type { $ZodType } from 'zod/v4/core';
import { isObject, isRecord } from '../internal/validate.js';
import { isLinearPattern } from './linearPattern.js';
import { boundCost } from './schemaCost.js';
import { escapePointer, localDefinition, SCHEMA_KEYWORDS, SCHEMA_MAPS } from './schemaKeywords.js';

/** A JSON Schema object as an MCP server lists it. */
export type JsonSchemaObject = Readonly<Record<string, unknown>>;

/**
 * How large and deep the arguments checked against a compiled schema may be. The first two are
 * budgets: for a schema that costs more than one evaluation per value, or more than one search step
 * per character, they are divided by that cost (see `boundCost`).
 */
export interface ArgsLimits {
  /** The most characters the arguments' strings and keys may have in all. */
  readonly maxArgsLength: number;
  /** The most values (objects, arrays, strings, numbers, booleans, nulls) the arguments may hold. */
  readonly maxArgsValues: number;
  /** The deepest a value may be nested (the arguments object itself is at depth 0). */
  readonly maxArgsDepth: number;
}

/**
 * The defaults of `mcpTools`, measured on zod 4.6 (`npm run bench`, bench/mcp.ts): zod takes up to
 * about 2.5 µs for a value that fails and builds its issue, so 2 Ki evaluations are about 5 ms; a
 * pattern search step takes about 1–4 ns, so 1 Mi steps are a few milliseconds too.
 */
export const DEFAULT_ARGS_LIMITS: ArgsLimits = Object.freeze({ maxArgsLength: 1_048_576, maxArgsValues: 2_048, maxArgsDepth: 64 });

/** Beyond this factor a schema is relaxed rather than limited: it would accept almost nothing. */
const MAX_FACTOR = 256;

/** A tool's `inputSchema` compiled into the zod schema its pipeline tool validates with. */
export interface CompiledInput {
  /**
   * Validates without transforming: the output is the input, exactly as the model sent it (no
   * defaults filled in, no keys stripped), so the server receives what the schema was checked against.
   * Its JSON Schema form (`toolSchemas`) is the server's schema as listed.
   */
  readonly schema: $ZodType;
  /**
   * JSON Pointers of the assertions that are not checked before the call (keywords zod cannot express,
   * references that do not resolve locally, regular expressions JavaScript cannot compile or that could
   * take more than linear time, compositions whose validation work would multiply). Each one only widens
   * what is accepted: nothing the server's schema accepts is ever rejected — except arguments beyond the
   * size and depth limits. The server still validates its own input.
   */
  readonly relaxed: readonly string[];
  /**
   * The limits the arguments are checked against: the caller's, divided by the schema's cost per
   * value and per character when it is more than one (see `boundCost`).
   */
  readonly limits: ArgsLimits;
}

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

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);

/** The arguments of an MCP call are always an object (`arguments: Record<string, unknown>`). */
const ARGUMENTS_OBJECT = z.looseObject({});

/**
 * Compiles an MCP tool's `inputSchema` into a zod schema with `z.fromJSONSchema` (zod ≥ 4.2).
 *
 * Validation follows JSON Schema rather than zod's parsing: the arguments must be an object, and the
 * compiled schema only checks them. Where zod and JSON Schema disagree, the schema is relaxed first so
 * that validation never rejects arguments the server's schema accepts:
 * - `format` is an annotation (the JSON Schema 2020-12 default), not checked: zod's formats are
 *   stricter than the standard ones (`uri-reference` would reject relative references, `uuid` checks
 *   version bits, `email` rejects valid RFC 5321 addresses).
 * - `not`, `if`/`then`/`else`, `dependentSchemas`, `dependentRequired`, `unevaluated*`, a `$ref` that
 *   is not local, an `enum`/`const` with object or array values (zod compares those by identity), a
 *   `pattern` JavaScript cannot compile and an unknown `type` are not checked and listed in `relaxed`.
 *
 * Validation never blocks the event loop for long, whatever the server sent:
 * - a `pattern` (or `patternProperties` key) is checked only when {@link isLinearPattern} proves that
 *   V8's backtracking engine tests it in linear time; any other is relaxed;
 * - arguments beyond the limits (characters, values, depth) are rejected before anything else is
 *   checked (an issue at the root says which limit);
 * - the schema's cost per value and per character is bounded (see `boundCost`): compositions that
 *   would make zod evaluate one value many times (shared or recursive `$ref`s under `anyOf`/`oneOf`/
 *   `allOf`, `contains`, `patternProperties`, large mixed `enum`s) are relaxed when the factor passes
 *   256, a `$ref` that recurses on one value is dropped, and the limits are divided by what is left,
 *   so that validation does at most `maxArgsValues` evaluations and `maxArgsLength` search steps (a
 *   few milliseconds at the defaults).
 *
 * @throws {Error} when the schema cannot be compiled even so; the tool should then not be offered.
 *
 * @example
 * ```ts
 * const { schema, relaxed } = compileInputSchema({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
 * safeParse(schema, { q: 1 }); // fails with an issue at path ['q']
 * ```
 */
export function compileInputSchema(inputSchema: JsonSchemaObject, limits: ArgsLimits = DEFAULT_ARGS_LIMITS): CompiledInput {
  const fromJSONSchema = (z as { fromJSONSchema?: typeof z.fromJSONSchema }).fromJSONSchema;
  if (typeof fromJSONSchema !== 'function') {
    throw new Error('toolstream/mcp needs zod 4.2 or later (z.fromJSONSchema) to validate MCP input schemas');
  }
  if (!isRecord(inputSchema)) throw new Error('the input schema is not a JSON object');

  const defsKey = isRecord(inputSchema['$defs']) ? '$defs' : 'definitions';
  const relaxer = new Relaxer(inputSchema, defsKey);
  const { $schema: _ignored, ...relaxed } = relaxer.relax(inputSchema, '') as Record<string, unknown>;
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

  const schema = z
    .unknown()
    .check((payload) => {
      const excess = exceedsLimits(payload.value, effective);
      if (excess !== undefined) {
        payload.issues.push({ code: 'custom', message: excess, input: undefined, path: [] });
        return;
      }
      const shape = ARGUMENTS_OBJECT.safeParse(payload.value);
      const result = shape.success ? validator.safeParse(payload.value) : shape;
      if (result.success) return;
      for (const issue of result.error.issues) payload.issues.push({ ...issue, input: undefined });
    })
    // What `toolSchemas` offers the model: the server's schema as listed. (zod reads a metadata `id`
    // as a definition name and would move the schema under `$defs`; it identifies nothing here.)
    .meta(withoutKey(inputSchema, 'id'));
  return { schema, relaxed: relaxer.dropped, limits: effective };
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
      if (key === 'format') continue; // an annotation; not reported (see compileInputSchema)
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
 * Why `value` is beyond the limits (a message for the model), or `undefined`. Counts a value when it
 * is reached, before walking it, and stops at the first excess: even a huge value costs little.
 */
function exceedsLimits(value: unknown, { maxArgsLength, maxArgsValues, maxArgsDepth }: ArgsLimits): string | undefined {
  if (!isObject(value)) return undefined; // not an object: the shape check rejects it
  let values = 1;
  let length = 0;
  const stack: [Record<string, unknown>, number][] = [[value, 0]];
  const reach = (child: unknown, key: string, depth: number): string | undefined => {
    if (depth > maxArgsDepth) return `The arguments are nested more than ${maxArgsDepth} levels deep; this tool accepts no deeper values.`;
    if (++values > maxArgsValues) return `The arguments hold more than ${maxArgsValues} values; this tool accepts no more in one call. Send less at once.`;
    length += key.length + (typeof child === 'string' ? child.length : 0);
    if (length > maxArgsLength) return `The arguments' strings and keys are longer than this tool accepts (${maxArgsLength} characters in all). Send less at once.`;
    if (isObject(child)) stack.push([child, depth]);
    return undefined;
  };
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    let excess: string | undefined;
    if (Array.isArray(item)) for (let i = 0; i < item.length && excess === undefined; i++) excess = reach(item[i], '', depth + 1);
    else for (const key of Object.keys(item)) if ((excess = reach(item[key], key, depth + 1)) !== undefined) break;
    if (excess !== undefined) return excess;
  }
  return undefined;
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

function withoutKey(schema: JsonSchemaObject, key: string): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(schema)) if (name !== key) defineValue(copy, name, value);
  return copy;
}

/** Sets an own property, even one named `__proto__`. */
function defineValue(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
